//! The walk of a JSON row ([`walked`]) gives what serde gives ([`parsed`]): the same requests,
//! field for field, or it leaves the row to serde. Every row below that the walk must take
//! itself is marked so, so that a walk that gave up on everything would fail too.

use proptest::prelude::*;

use super::super::warehouse::testing::{against_serde, whole, Whole};
use super::{parsed, walked, Snowflake};
use crate::reads::json_fields::tests::other_value;

/// What the reader answers for `row` (walk, or serde where the walk gives up), what serde
/// alone answers, and whether the walk took the row.
fn both(row: &str) -> (Whole, Whole, bool) {
    let mut reader = Snowflake::new();
    // A first line that says the file is JSON Lines.
    let _ = reader.parse(b"{}");
    let got = whole(reader.parse(row.as_bytes()));
    let taken = walked(row.as_bytes()).map(|p| whole(Ok(p)));
    against_serde(row, got, || whole(parsed(row.as_bytes())), taken)
}

// The rows are written from Snowflake's reference of the ACCESS_HISTORY view (Account
// Usage): its columns (`QUERY_ID`, `QUERY_START_TIME`, `USER_NAME`,
// `DIRECT_OBJECTS_ACCESSED`, `BASE_OBJECTS_ACCESSED`, `OBJECTS_MODIFIED`,
// `OBJECT_MODIFIED_BY_DDL`, `POLICIES_REFERENCED`, `PARENT_QUERY_ID`, `ROOT_QUERY_ID`), its
// sample values (`2022-01-25 16:17:47.388 +0000`, `JSMITH`, the function
// `GOVERNANCE.FUNCTIONS.RETURN_SUM` with its `argumentSignature`, the Table
// `GOVERNANCE.TABLES.T1` with the column `CONTENT`) and its table of the JSON fields
// (`objectDomain`, `objectId`, `objectName`, `columns`, `columnId`, `columnName`); then the
// same rows bent: lower-case keys, keys in another order, escapes, nulls, empty arrays,
// values nested where none is read, keys twice, cut short.
const FULL: &str = r#"{"QUERY_ID":"a0fda135-d678-4184-942b-c3411ae8d1ce","QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","USER_NAME":"JSMITH","DIRECT_OBJECTS_ACCESSED":[{"columns":[{"columnId":68610,"columnName":"CONTENT"}],"objectDomain":"View","objectId":66565,"objectName":"GOVERNANCE.TABLES.V1"}],"BASE_OBJECTS_ACCESSED":[{"objectDomain":"FUNCTION","objectName":"GOVERNANCE.FUNCTIONS.RETURN_SUM","objectId":"2","argumentSignature":"(NUM1 NUMBER, NUM2 NUMBER)","dataType":"NUMBER(38,0)"},{"columns":[{"columnId":68610,"columnName":"CONTENT"},{"columnId":68611,"columnName":"camelCase"}],"objectDomain":"Table","objectId":66564,"objectName":"GOVERNANCE.TABLES.T1"},{"objectDomain":"View","objectId":66565,"objectName":"GOVERNANCE.TABLES.V1"}],"OBJECTS_MODIFIED":[],"OBJECT_MODIFIED_BY_DDL":null,"POLICIES_REFERENCED":[{"policy_name":"MASK","policy_kind":"MASKING_POLICY","columns":[{"a":[1,{"b":null}]}]}],"PARENT_QUERY_ID":null,"ROOT_QUERY_ID":null}"#;

/// (row, whether the walk must take it itself).
const ROWS: &[(&str, bool)] = &[
    (FULL, true),
    // Lower-case keys (an unload of `SELECT query_start_time, ...`), in another order, with
    // whitespace around every token.
    (
        r#" { "base_objects_accessed" : [ { "objectName" : "GIS.PUBLIC.ROADS_V1" , "columns" : [ { "columnName" : "POP_EST" } , { "columnName" : "geom" } ] } ] , "user_name" : "ETL_SVC" , "query_start_time" : "2022-01-25T16:20:00Z" } "#,
        true,
    ),
    // An escape where nothing is taken: the walk still takes the row.
    (
        r#"{"QUERY_ID":"a\"b\\c\u00e9","QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","USER_NAME":"JSMITH","BASE_OBJECTS_ACCESSED":[{"objectName":"GIS.PUBLIC.ROADS_V1","objectDomain":"Table","note":"\/\b\f\n\r\t"}]}"#,
        true,
    ),
    // A surrogate pair in a value no field takes: the shared walk leaves its check to serde.
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":[{"objectName":"A.B.C","note":"\ud83d\ude00"}]}"#,
        false,
    ),
    // An escape in a field taken: serde reads it.
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","USER_NAME":"J\u0053MITH","BASE_OBJECTS_ACCESSED":[{"objectName":"GIS.PUBLIC.ROADS_V1"}]}"#,
        false,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","USER_NAME":"JSMITH","BASE_OBJECTS_ACCESSED":[{"objectName":"GIS.PUBLIC.\"Roads\"","columns":[{"columnName":"A\tB"}]}]}"#,
        false,
    ),
    (
        r#"{"QUERY_START\u005fTIME":"2022-01-25 16:17:47.388 +0000","USER_NAME":"JSMITH","BASE_OBJECTS_ACCESSED":[]}"#,
        false,
    ),
    // Nulls and empty arrays.
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","USER_NAME":null,"BASE_OBJECTS_ACCESSED":[{"objectName":null,"objectDomain":null,"columns":null},{"objectName":"GIS.PUBLIC.T","columns":[]},{"objectName":"GIS.PUBLIC.U","columns":[{"columnName":null},{"columnId":3},{}]},{}]}"#,
        true,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","USER_NAME":"","BASE_OBJECTS_ACCESSED":null}"#,
        true,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":[]}"#,
        true,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000"}"#,
        true,
    ),
    // Not ASCII, where it is folded and where it is not.
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","USER_NAME":"JÖRG","BASE_OBJECTS_ACCESSED":[{"objectName":"GIS.ÖFFENTLICH.STRAẞEN","objectDomain":"Materialized view","columns":[{"columnName":"STRAẞE"},{"columnName":"Größe"}]}]}"#,
        true,
    ),
    // Domains: streams, stages, dynamic tables.
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","USER_NAME":"A","BASE_OBJECTS_ACCESSED":[{"objectName":"GIS.PUBLIC.S","objectDomain":"Stream"},{"objectName":"GIS.PUBLIC.ST","objectDomain":"Stage"},{"objectName":"GIS.PUBLIC.D","objectDomain":"Dynamic Table"},{"objectName":"A.B.C.D","objectDomain":"table"},{"objectName":"","objectDomain":"Table"}]}"#,
        true,
    ),
    // A key twice: serde refuses a duplicate field, in either spelling.
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":[]}"#,
        false,
    ),
    (
        r#"{"query_start_time":"2022-01-25 16:17:47.388 +0000","QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":[]}"#,
        false,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":[{"objectName":"A.B.C","objectName":"A.B.D"}]}"#,
        false,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":[{"objectName":"A.B.C","columns":[{"columnName":"X","columnName":"Y"}]}]}"#,
        false,
    ),
    // A key twice that no field takes: serde ignores it, and so does the walk.
    (
        r#"{"QUERY_ID":"1","QUERY_ID":"2","QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":[{"objectId":1,"objectId":2,"objectName":"A.B.C"}]}"#,
        true,
    ),
    // `BASE_OBJECTS_ACCESSED` as a string (a VARIANT unloaded as text): serde reads it.
    (
        r#"{"query_start_time":"2022-01-25T16:20:00Z","user_name":"ETL_SVC","base_objects_accessed":"[{\"objectDomain\":\"Table\",\"objectName\":\"GIS.PUBLIC.ROADS_V1\",\"columns\":[{\"columnId\":1,\"columnName\":\"POP_EST\"}]}]"}"#,
        false,
    ),
    // Values of another type, no instant, one that is no time, keys of another case.
    (
        r#"{"QUERY_START_TIME":12,"BASE_OBJECTS_ACCESSED":[]}"#,
        false,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":5}"#,
        false,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":[["A.B.C","Table",null]]}"#,
        false,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":[{"objectName":"A.B.C","columns":{"columnName":"X"}}]}"#,
        false,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":[{"objectName":"A.B.C","columns":[{"columnName":7}]}]}"#,
        false,
    ),
    (
        r#"{"USER_NAME":"ETL_SVC","BASE_OBJECTS_ACCESSED":[]}"#,
        false,
    ),
    (
        r#"{"Query_Start_Time":"2022-01-25 16:17:47.388 +0000","BASE_OBJECTS_ACCESSED":[]}"#,
        false,
    ),
    (
        r#"{"QUERY_START_TIME":"yesterday","BASE_OBJECTS_ACCESSED":[]}"#,
        false,
    ),
    // Not an object, or more than one.
    (r#"["2022-01-25 16:17:47.388 +0000","JSMITH",[]]"#, false),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000"} {}"#,
        false,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","X":01}"#,
        false,
    ),
    (
        r#"{"QUERY_START_TIME":"2022-01-25 16:17:47.388 +0000","X":[1,]}"#,
        false,
    ),
];

#[test]
fn the_walk_and_serde_read_these_rows_alike() {
    for (row, must_take) in ROWS {
        let (got, want, taken) = both(row);
        assert_eq!(got, want, "{row}");
        assert_eq!(taken, *must_take, "taken by the walk: {row}");
    }
    // The full row cut short at every byte: never a row (serde says why), never a panic.
    for cut in 1..FULL.len() {
        if let Some(row) = FULL.get(..cut) {
            let (got, want, taken) = both(row);
            assert_eq!(got, want, "{row}");
            assert!(!taken && got.is_err(), "{row}");
        }
    }
    // Bytes that are not UTF-8 in a value no field takes: serde's answer, whatever it is.
    let mut bytes = FULL.as_bytes().to_vec();
    let at = FULL.find("a0fda135").unwrap();
    bytes[at] = 0xff;
    assert!(walked(&bytes).is_none());
}

/// A string as JSON writes it: plain, or each character a `\u` escape (the same string to a
/// parser, which the walk leaves to serde).
fn quoted(s: &str, escaped: bool) -> String {
    if escaped {
        let chars: String = s.encode_utf16().map(|c| format!("\\u{c:04x}")).collect();
        format!("\"{chars}\"")
    } else {
        serde_json::to_string(s).unwrap()
    }
}

/// One element of `base_objects_accessed`: its members, in the order given, and whether
/// some piece of it is one the walk leaves to serde.
fn object() -> impl Strategy<Value = (String, bool)> {
    let name = prop::sample::select(vec![
        "\"GIS.PUBLIC.ROADS_V1\"",
        "\"gis.public.Towns_v2\"",
        "\"A.B\"",
        "\"\"",
        "\"X.Y.Z.W\"",
        "null",
        "\"GIS.PUBLIC.\\\"Q\\\"\"",
    ]);
    let domain = prop::sample::select(vec![
        "\"Table\"",
        "\"View\"",
        "\"Stage\"",
        "\"FUNCTION\"",
        "\"Stream\"",
        "\"External table\"",
        "null",
    ]);
    let column = prop::sample::select(vec![
        "{\"columnId\":1,\"columnName\":\"NAME\"}",
        "{\"columnName\":\"geom\"}",
        "{\"columnName\":\"\\\"camelCase\\\"\"}",
        "{\"columnName\":\"\"}",
        "{\"columnName\":null}",
        "{\"columnName\":\"STRAẞE\"}",
        "{}",
    ]);
    let columns = prop_oneof![
        Just(None),
        Just(Some("null".to_string())),
        prop::collection::vec(column, 0..4).prop_map(|c| Some(format!("[{}]", c.join(",")))),
    ];
    (
        prop::option::of(name),
        prop::option::of(domain),
        columns,
        prop::collection::vec(other_value(true), 0..2),
        Just((0..5).collect::<Vec<usize>>()).prop_shuffle(),
    )
        .prop_map(|(name, domain, columns, extra, order)| {
            let mut members = Vec::new();
            if let Some(n) = name {
                members.push(format!("\"objectName\":{n}"));
            }
            if let Some(d) = domain {
                members.push(format!("\"objectDomain\":{d}"));
            }
            if let Some(c) = &columns {
                members.push(format!("\"columns\":{c}"));
            }
            for (i, x) in extra.iter().enumerate() {
                members.push(format!("\"objectId{i}\":{x}"));
            }
            let doubt = members.iter().any(|m| m.contains("\\\"Q"))
                || columns.is_some_and(|c| c.contains("\\\"camel"));
            let ordered: Vec<&String> = order.iter().filter_map(|i| members.get(*i)).collect();
            let text: Vec<&str> = ordered.iter().map(|s| s.as_str()).collect();
            (format!("{{{}}}", text.join(",")), doubt)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Rows made of pieces (either case of keys, any order, any whitespace, nulls, absent
    /// columns, escapes, values of every kind where nothing is read, a key twice, a row cut
    /// short): the reader gives serde's answer, and the walk takes every row without a piece
    /// it leaves to serde.
    #[test]
    fn rows_of_any_pieces_read_as_serde_reads_them(
        upper in prop::collection::vec(any::<bool>(), 3),
        at in prop::sample::select(vec![
            "2022-01-25 16:17:47.388 +0000",
            "2026-11-27T10:00:00Z",
            "2026-11-27 10:00:00",
            "yesterday",
        ]),
        user in prop::option::of("[A-Za-z_0-9Ö]{0,8}"),
        escaped in prop::collection::vec(any::<bool>(), 2),
        objects in prop::collection::vec(object(), 0..4),
        base in 0usize..4,
        extra in prop::collection::vec(other_value(true), 0..3),
        order in Just((0..6).collect::<Vec<usize>>()).prop_shuffle(),
        twice in prop::option::weighted(0.2, 0usize..6),
        space in prop::sample::select(vec!["", " ", "\t", " \r\n "]),
        cut in prop::option::weighted(0.15, 0usize..2000),
    ) {
        let key = |i: usize, name: &str| if upper[i] { name.to_uppercase() } else { name.to_string() };
        let list = format!("[{}]", objects.iter().map(|(o, _)| o.as_str()).collect::<Vec<_>>().join(&format!(",{space}")));
        // The objects as an array, `null`, absent, or a string holding the array.
        let base_value = match base {
            0 | 1 => list.clone(),
            2 => "null".to_string(),
            _ => serde_json::to_string(&list).unwrap(),
        };
        let mut members = vec![
            format!("\"{}\":{space}{}", key(0, "query_start_time"), quoted(at, escaped[0])),
            match &user {
                Some(u) => format!("\"{}\":{space}{}", key(1, "user_name"), quoted(u, escaped[1])),
                None => format!("\"{}\":{space}null", key(1, "user_name")),
            },
            format!("\"{}\":{space}{}", key(2, "base_objects_accessed"), base_value),
            format!("\"DIRECT_OBJECTS_ACCESSED\":{space}{list}"),
        ];
        for (i, x) in extra.iter().enumerate() {
            members.push(format!("\"X{i}\":{space}{x}"));
        }
        let mut ordered: Vec<String> = order.iter().filter_map(|i| members.get(*i).cloned()).collect();
        if let Some(t) = twice {
            if let Some(m) = members.get(t) {
                ordered.push(m.clone());
            }
        }
        let mut row = format!("{space}{{{space}{}{space}}}{space}", ordered.join(&format!("{space},{space}")));
        if let Some(mut c) = cut.filter(|c| *c < row.len()) {
            while !row.is_char_boundary(c) {
                c -= 1;
            }
            row.truncate(c);
        }
        let (got, want, taken) = both(&row);
        prop_assert_eq!(got, want, "{}", row);
        let doubt = escaped[0]
            || (escaped[1] && user.as_deref().is_some_and(|u| !u.is_empty()))
            || base == 3
            || twice.is_some_and(|t| t < 3)
            || (base < 2 && objects.iter().any(|(_, d)| *d))
            || at == "yesterday";
        if !doubt && cut.is_none() {
            prop_assert!(taken, "the walk gave up on {}", row);
        }
    }
}
