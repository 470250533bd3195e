//! Times the ways to take a read's four fields out of a JSON line, on the same lines: the
//! scanner `contracts` ships (`contracts::consumers::reads::bench_json_block`), serde_json
//! into a struct of borrowed fields, sonic-rs `get_many` (SIMD, checked), jiter (a lazy
//! iterator that skips values) and simd-json into the same struct. Each must find the same
//! reads; the median of REPS passes over the whole file is printed per approach, in
//! nanoseconds per line, one thread. Lines of shape a (flat, `at` in epoch milliseconds)
//! or b (the consumer under `client.id`, `at` in RFC 3339), as bench/gen_consumption.py
//! writes them.
use std::time::Instant;

use contracts::model::source::{AtUnit, FieldName, Source};

#[derive(serde::Deserialize)]
struct FlatRead<'a> {
    #[serde(borrow)]
    consumer: &'a str,
    #[serde(borrow)]
    dataset: &'a str,
    at: i64,
    #[serde(borrow)]
    contract: &'a str,
}

#[derive(serde::Deserialize)]
struct Client<'a> {
    #[serde(borrow)]
    id: &'a str,
}

#[derive(serde::Deserialize)]
struct NestedRead<'a> {
    #[serde(borrow)]
    client: Client<'a>,
    #[serde(borrow)]
    dataset: &'a str,
    #[serde(borrow)]
    at: &'a str,
    #[serde(borrow)]
    contract: &'a str,
}

/// What each approach returns for the whole file: reads found and the sum of the consumers'
/// lengths (so that no approach can skip the work).
type Answer = (usize, usize);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(shape)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: jsonscan FILE.jsonl a|b [REPS]");
        std::process::exit(2);
    };
    let reps: usize = args.get(3).map_or(5, |r| r.parse().expect("REPS"));
    let data = std::fs::read(path).expect("the log");
    let nested = shape == "b";
    let lines: Vec<&[u8]> = data
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .collect();

    let mut source = Source::glob("");
    if nested {
        source.fields.consumer = FieldName(vec!["client".into(), "id".into()]);
    } else {
        source.fields.at_unit = AtUnit::Millis;
    }
    let mut tree = sonic_rs::PointerTree::new();
    if nested {
        tree.add_path(["client", "id"].iter());
    } else {
        tree.add_path(["consumer"].iter());
    }
    tree.add_path(["dataset"].iter());
    tree.add_path(["at"].iter());
    tree.add_path(["contract"].iter());

    let approaches: Vec<(&str, Box<dyn Fn() -> Answer>)> = vec![
        (
            "contracts (its own scanner)",
            Box::new(|| contracts::consumers::reads::bench_json_block(&data, &source)),
        ),
        (
            "serde_json into borrowed fields",
            Box::new(|| {
                let mut a = (0, 0);
                for l in &lines {
                    let n = if nested {
                        let r: NestedRead = serde_json::from_slice(l).expect("serde_json");
                        std::hint::black_box((r.dataset, r.at, r.contract));
                        r.client.id.len()
                    } else {
                        let r: FlatRead = serde_json::from_slice(l).expect("serde_json");
                        std::hint::black_box((r.dataset, r.at, r.contract));
                        r.consumer.len()
                    };
                    a = (a.0 + 1, a.1 + n);
                }
                a
            }),
        ),
        (
            "sonic-rs get_many (checked)",
            Box::new(|| {
                let mut a = (0, 0);
                for l in &lines {
                    let v = sonic_rs::get_many(*l, &tree).expect("sonic-rs");
                    let consumer = v[0].as_ref().expect("consumer").as_raw_str();
                    assert!(v.iter().all(Option::is_some));
                    // The raw value keeps its quotes.
                    a = (a.0 + 1, a.1 + consumer.len() - 2);
                }
                a
            }),
        ),
        (
            "jiter, skipping what is not needed",
            Box::new(|| {
                let mut a = (0, 0);
                for l in &lines {
                    let mut j = jiter::Jiter::new(l);
                    let mut key = j.next_object_bytes().expect("jiter");
                    let mut n = 0;
                    while let Some(k) = key {
                        match k {
                            b"consumer" if !nested => n = j.next_bytes().expect("jiter").len(),
                            b"client" if nested => {
                                let mut inner = j.next_object_bytes().expect("jiter");
                                while let Some(k2) = inner {
                                    if k2 == b"id" {
                                        n = j.next_bytes().expect("jiter").len();
                                    } else {
                                        j.next_skip().expect("jiter");
                                    }
                                    inner = j.next_key_bytes().expect("jiter");
                                }
                            }
                            b"dataset" | b"contract" => {
                                j.next_bytes().expect("jiter");
                            }
                            b"at" if nested => {
                                j.next_bytes().expect("jiter");
                            }
                            b"at" => {
                                j.next_int().expect("jiter");
                            }
                            _ => j.next_skip().expect("jiter"),
                        }
                        key = j.next_key_bytes().expect("jiter");
                    }
                    j.finish().expect("jiter");
                    a = (a.0 + 1, a.1 + n);
                }
                a
            }),
        ),
        (
            "simd-json into borrowed fields",
            Box::new(|| {
                let mut a = (0, 0);
                let mut copy = Vec::new();
                for l in &lines {
                    // simd-json parses in place: each line is copied first, as it must be.
                    copy.clear();
                    copy.extend_from_slice(l);
                    let n = if nested {
                        let r: NestedRead = simd_json::from_slice(&mut copy).expect("simd-json");
                        std::hint::black_box((r.dataset, r.at, r.contract));
                        r.client.id.len()
                    } else {
                        let r: FlatRead = simd_json::from_slice(&mut copy).expect("simd-json");
                        std::hint::black_box((r.dataset, r.at, r.contract));
                        r.consumer.len()
                    };
                    a = (a.0 + 1, a.1 + n);
                }
                a
            }),
        ),
    ];

    println!(
        "{} lines of shape {shape} ({} MB), medians of {reps} passes, one thread",
        lines.len(),
        data.len() / 1_000_000
    );
    let mut want = None;
    for (name, run) in &approaches {
        let mut times = Vec::new();
        let mut answer = (0, 0);
        for _ in 0..reps {
            let t = Instant::now();
            answer = run();
            times.push(t.elapsed().as_nanos() as f64 / lines.len() as f64);
        }
        times.sort_by(f64::total_cmp);
        let w = *want.get_or_insert(answer);
        assert_eq!(answer, w, "{name} finds other reads");
        println!("  {name:38} {:8.1} ns/line", times[times.len() / 2]);
    }
}
