//! Names compared across tools: ESRI, OGC and EPSG spell the same CRS, datum or method
//! differently (`NAD_1983_HARN_StatePlane_…` and `NAD83(HARN) / …`), so names are cut into
//! words and scored by how many agree (see the module above for the rules).

/// Words of a name, for comparing names written by different tools: lower case, split at
/// every non-alphanumeric and at letter/digit boundaries, a `19xx` year as `xx`, the ESRI
/// prefixes `D_` and `GCS_` dropped, `+` kept as a word (`CH1903+` is not `CH1903`).
pub(super) fn words(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        if !cur.is_empty() {
            let w = std::mem::take(cur);
            let w = if w.len() == 4 && w.starts_with("19") && w.chars().all(|c| c.is_ascii_digit())
            {
                w[2..].to_string()
            } else {
                w
            };
            if w != "d" && w != "gcs" {
                out.push(w);
            }
        }
    };
    for c in s.chars() {
        if c == '.' || c == '\'' {
            continue;
        }
        if c == '+' {
            flush(&mut cur, &mut out);
            out.push("plus".into());
            continue;
        }
        if !c.is_alphanumeric() {
            flush(&mut cur, &mut out);
            continue;
        }
        let c = c.to_ascii_lowercase();
        if let Some(last) = cur.chars().last() {
            if last.is_ascii_digit() != c.is_ascii_digit() {
                flush(&mut cur, &mut out);
            }
        }
        cur.push(c);
    }
    flush(&mut cur, &mut out);
    out
}

/// How well two names agree: (weight of the words matched on both sides, weight of the
/// words left over on both), numbers weighing three times a word. A word matches an equal
/// word, or a run of the other side's words it is the initials of.
pub(super) fn name_match(a: &[String], b: &[String]) -> (i64, i64) {
    let mut ma = vec![false; a.len()];
    let mut mb = vec![false; b.len()];
    for (i, w) in a.iter().enumerate() {
        if let Some(j) = (0..b.len()).find(|&j| !mb[j] && b[j] == *w) {
            ma[i] = true;
            mb[j] = true;
        }
    }
    fn initials(x: &[String], mx: &mut [bool], y: &[String], my: &mut [bool]) {
        for i in 0..x.len() {
            let w = &x[i];
            if mx[i] || w.len() < 2 || !w.chars().all(|c| c.is_ascii_alphabetic()) {
                continue;
            }
            'start: for s in 0..y.len() {
                let mut k = 0;
                let mut j = s;
                while k < w.len() && j < y.len() {
                    if my[j] || !y[j].starts_with(w.as_bytes()[k] as char) {
                        continue 'start;
                    }
                    k += 1;
                    j += 1;
                }
                if k == w.len() {
                    mx[i] = true;
                    my[s..j].iter_mut().for_each(|m| *m = true);
                    break;
                }
            }
        }
    }
    initials(a, &mut ma, b, &mut mb);
    initials(b, &mut mb, a, &mut ma);
    let weight = |w: &String| {
        if w.chars().all(|c| c.is_ascii_digit()) {
            3
        } else {
            1
        }
    };
    let sum = |ws: &[String], m: &[bool], v: bool| -> i64 {
        ws.iter()
            .zip(m)
            .filter(|(_, &x)| x == v)
            .map(|(w, _)| weight(w))
            .sum()
    };
    (
        sum(a, &ma, true) + sum(b, &mb, true),
        sum(a, &ma, false) + sum(b, &mb, false),
    )
}

/// Matched minus left over.
pub(super) fn name_score(a: &[String], b: &[String]) -> i64 {
    let (m, u) = name_match(a, b);
    m - u
}

/// Lower case, every run of other characters one `_`: `Lambert Conic Conformal (2SP)` is
/// `lambert_conic_conformal_2sp`.
pub(super) fn norm(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}
