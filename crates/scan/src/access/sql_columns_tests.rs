use super::*;

const ROADS: &str = "public.roads_v1";

fn named(cols: &[&str]) -> Columns {
    Columns::named(cols.iter().map(|c| c.to_string()))
}

#[test]
fn star_and_whole_row_forms_read_every_column() {
    // pgaudit README's session-audit example shape, and PostgreSQL's "Table Expressions":
    // `SELECT *`, `tbl.*`, a whole-row reference, `row_to_json` (9.4 "JSON Functions").
    for sql in [
        "SELECT * FROM roads_v1",
        "select * from public.roads_v1 where name = 'A1'",
        "SELECT r.* FROM public.roads_v1 r JOIN towns t ON t.id = r.town_id",
        "SELECT r FROM roads_v1 AS r",
        "SELECT row_to_json(r) FROM roads_v1 r",
        "SELECT row_to_json(r.*) FROM roads_v1 r",
        "SELECT roads_v1 FROM roads_v1",
        // A star over the relation wins over a column this walk cannot attribute.
        "SELECT *, id FROM roads_v1, closures",
    ] {
        assert_eq!(columns_read(sql, ROADS), Columns::All, "{sql}");
    }
}

#[test]
fn copy_to_reads_the_whole_table_or_its_column_list() {
    // PostgreSQL's COPY synopsis: `COPY table_name [ ( column_name [, ...] ) ] TO …`.
    assert_eq!(columns_read("COPY roads_v1 TO STDOUT", ROADS), Columns::All);
    assert_eq!(
        columns_read(
            "COPY public.roads_v1 (name, geom) TO STDOUT WITH (FORMAT csv)",
            ROADS
        ),
        named(&["name", "geom"])
    );
    assert_eq!(
        columns_read(
            "COPY (SELECT name FROM roads_v1 WHERE pop_est > 0) TO STDOUT",
            ROADS
        ),
        named(&["name", "pop_est"])
    );
}

#[test]
fn columns_named_anywhere_count() {
    // The PostGIS workshop's "Spatial Joins" shape: `ST_Intersects(a.geom, b.geom)`.
    let sql = "SELECT r.name, t.name FROM public.roads_v1 r JOIN towns t \
               ON ST_Intersects(r.geom, t.geom) WHERE r.pop_est > 1000 ORDER BY r.rank";
    assert_eq!(
        columns_read(sql, ROADS),
        named(&["name", "geom", "pop_est", "rank"])
    );
    // One relation: unqualified columns are its own, in every clause.
    let sql = "SELECT iso_a3, count(*) FROM roads_v1 WHERE ST_DWithin(geom, \
               ST_MakePoint(1, 2)::geography, 500) GROUP BY iso_a3 HAVING max(len) > 3 \
               ORDER BY upper(name)";
    assert_eq!(
        columns_read(sql, ROADS),
        named(&["iso_a3", "geom", "len", "name"])
    );
    // count(*) reads no column: nothing, and known to be nothing.
    assert_eq!(
        columns_read("SELECT count(*) FROM roads_v1", ROADS),
        named(&[])
    );
    // Qualified with the schema and the table, in a join with USING.
    let sql = "SELECT public.roads_v1.name FROM public.roads_v1 JOIN towns USING (town_id)";
    assert_eq!(columns_read(sql, ROADS), named(&["name", "town_id"]));
}

#[test]
fn quoted_identifiers_keep_their_case_and_unquoted_ones_fold() {
    // PostgreSQL's "Identifiers and Key Words": unquoted names fold to lower case.
    assert_eq!(
        columns_read("SELECT \"PopEst\", Name FROM Public.Roads_V1", ROADS),
        named(&["PopEst", "name"])
    );
    // pgaudit logs a mixed-case relation quoted (quote_qualified_identifier).
    let rel = "public.\"Roads\"";
    assert_eq!(
        columns_read("SELECT \"Roads\".a FROM public.\"Roads\"", rel),
        named(&["a"])
    );
    assert_eq!(columns_read("SELECT a FROM roads", rel), Columns::Unknown);
}

#[test]
fn subqueries_and_ctes_are_followed_where_sure() {
    // PostgreSQL's "WITH Queries" first example's shape.
    let sql = "WITH big AS (SELECT name, pop_est FROM roads_v1 WHERE pop_est > 10) \
               SELECT name FROM big ORDER BY pop_est";
    assert_eq!(columns_read(sql, ROADS), named(&["name", "pop_est"]));
    let sql = "SELECT s.n FROM (SELECT name AS n, geom FROM roads_v1) s";
    assert_eq!(columns_read(sql, ROADS), named(&["name", "geom"]));
    let sql = "SELECT name FROM roads_v1 r WHERE EXISTS \
               (SELECT 1 FROM closures c WHERE c.road_id = r.id)";
    assert_eq!(columns_read(sql, ROADS), named(&["name", "id"]));
    let sql = "SELECT name FROM towns WHERE id IN (SELECT town_id FROM roads_v1)";
    assert_eq!(columns_read(sql, ROADS), named(&["town_id"]));
}

#[test]
fn windows_laterals_and_set_returning_functions() {
    // PostgreSQL's "Window Functions" tutorial shape: `rank() OVER (PARTITION BY … ORDER BY …)`.
    let sql = "SELECT name, rank() OVER (PARTITION BY iso_a3 ORDER BY pop_est DESC) FROM roads_v1";
    assert_eq!(
        columns_read(sql, ROADS),
        named(&["name", "iso_a3", "pop_est"])
    );
    // The PostGIS manual's ST_Dump example: a set-returning function over the row's geometry.
    let sql = "SELECT r.gid, d.path FROM roads_v1 r, ST_Dump(r.geom) AS d";
    assert_eq!(columns_read(sql, ROADS), named(&["gid", "geom"]));
    // PostgreSQL's "LATERAL Subqueries": the subquery sees the relation before it.
    let sql = "SELECT r.name, x.n FROM roads_v1 r, LATERAL (SELECT r.len * 2 AS n) x";
    assert_eq!(columns_read(sql, ROADS), named(&["name", "len"]));
    // PostgreSQL's "DISTINCT Clause", and a prepared statement's parameter as pgaudit logs it.
    let sql = "SELECT DISTINCT ON (iso_a3) name FROM roads_v1 WHERE id = $1 ORDER BY iso_a3, len";
    assert_eq!(
        columns_read(sql, ROADS),
        named(&["iso_a3", "name", "id", "len"])
    );
}

#[test]
fn doubt_is_unknown() {
    for (sql, why) in [
        (
            "SELECT name FROM roads_v1, towns",
            "unqualified with two relations",
        ),
        (
            "SELECT r.a FROM roads_v1 r WHERE r.id IN (SELECT road_id FROM closures)",
            "unqualified in a subquery that may be correlated",
        ),
        (
            "SELECT name FROM roads_v1 NATURAL JOIN towns",
            "natural join",
        ),
        ("SELECT x.a FROM roads_v1", "a qualifier naming nothing"),
        ("SELECT name, geom FROM roads_v1 WHERE", "cut short"),
        ("<not logged>", "pgaudit's placeholder"),
        ("", "empty"),
        (
            "SELECT r.a FROM roads_v1 AS r(a, b)",
            "columns renamed by an alias list",
        ),
        (
            "TABLE roads_v1",
            "`TABLE name`, which the PostgreSQL dialect does not parse",
        ),
        ("SELECT name FROM roads_v1_view", "a view over the relation"),
        (
            "INSERT INTO t SELECT name FROM roads_v1",
            "a statement not followed",
        ),
        (
            "WITH roads_v1 AS (SELECT 1 AS a) SELECT a FROM roads_v1",
            "a CTE named as the relation",
        ),
    ] {
        assert_eq!(columns_read(sql, ROADS), Columns::Unknown, "{why}: {sql}");
    }
}

#[test]
fn one_parse_answers_for_each_relation() {
    let s = Statements::parse("SELECT r.name, t.pop FROM public.roads_v1 r, public.towns t");
    assert_eq!(s.columns(ROADS), named(&["name"]));
    assert_eq!(s.columns("public.towns"), named(&["pop"]));
    assert_eq!(s.columns("other.towns"), Columns::Unknown);
}

#[test]
fn the_union_of_reads() {
    let u = Columns::Unknown;
    assert_eq!(named(&["a"]).union(named(&["b"])), named(&["a", "b"]));
    assert_eq!(named(&["a"]).union(u.clone()), Columns::Unknown);
    assert_eq!(named(&["a"]).union(Columns::All), Columns::All);
    assert_eq!(u.clone().union(Columns::All), Columns::All);
    let mut c = named(&["a"]);
    c.take_in(named(&[]));
    assert_eq!(c, named(&["a"]));
    let mut e = named(&[]);
    e.take_in(named(&["b"]));
    assert_eq!(e, named(&["b"]));
    c.take_in(u.clone());
    assert_eq!(c, u);
}

#[test]
fn a_deeply_nested_statement_is_unknown_not_a_crash() {
    // sqlparser stops at its recursion limit rather than overflow the stack.
    let deep = format!(
        "SELECT {}a{} FROM roads_v1",
        "(".repeat(20_000),
        ")".repeat(20_000)
    );
    assert_eq!(columns_read(&deep, ROADS), Columns::Unknown);
}

#[test]
fn an_answer_asked_again_is_the_same() {
    let s = Statements::parse("SELECT a FROM roads_v1 WHERE b > 1");
    assert_eq!(s.columns(ROADS), named(&["a", "b"]));
    assert_eq!(s.columns(ROADS), named(&["a", "b"]));
    assert_eq!(s.clone().columns(ROADS), named(&["a", "b"]));
    assert_eq!(Statements::unknown().columns(ROADS), Columns::Unknown);
}

proptest::proptest! {
    #[test]
    fn any_text_is_answered_without_a_panic(sql in "\\PC{0,200}") {
        let _ = columns_read(&sql, ROADS);
    }

    #[test]
    fn any_sql_like_text_is_answered_without_a_panic(
        sql in "(SELECT|FROM|WHERE|\\(|\\)|,|\\*|r\\.|roads_v1|public\\.|\"|a|JOIN|ON|=| )*"
    ) {
        let _ = columns_read(&sql, ROADS);
    }
}
