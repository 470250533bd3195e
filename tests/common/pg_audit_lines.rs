//! pgaudit entries as PostgreSQL's `jsonlog` destination writes them, for the tests of what a
//! read's statement shows of the attributes it read. The keys are those of the jsonlog format
//! in PostgreSQL's documentation ("Using JSON-Format Log Output"), the message pgaudit's
//! `AUDIT: class,statement id,substatement id,class,command,object type,object name,
//! statement,parameter` line from its README. A real server's log of the same shape is read
//! in `test_pgaudit`.

use crate::common::world::World;

/// One `SESSION` read entry: at `at` (`2026-11-27 10:00:00.120 UTC`), `user` ran `statement`,
/// which read `object` (`public.roads_v1`). `id` is the statement's number in its session.
pub fn entry(at: &str, user: &str, id: u32, object: &str, statement: &str) -> String {
    let statement = statement.replace('"', "\"\"");
    let message =
        format!("AUDIT: SESSION,{id},1,READ,SELECT,VIEW,{object},\"{statement}\",<not logged>");
    serde_json::json!({
        "timestamp": at,
        "user": user,
        "dbname": "gis",
        "pid": 4242,
        "session_id": format!("6564a1b0.{id:x}"),
        "line_num": 1,
        "error_severity": "LOG",
        "message": message,
        "backend_type": "client backend",
    })
    .to_string()
}

/// The store reads `pg/postgresql.json`, a pgaudit jsonlog whose views are one per line of a
/// dataset (`public.roads_v1`), and `consumption/blind.jsonl`, a log of reads that cannot say
/// which attributes a read touched; `entries` are the log's lines.
pub fn with_pgaudit_log(w: &World, entries: &[String]) {
    w.read_only_sources(
        "[[consumption.source]]\npath = \"pg/*.json\"\nformat = \"pgaudit\"\n\
         match = \"public.{dataset}_v{line}\"\n\n\
         [[consumption.source]]\npath = \"consumption/blind.jsonl\"\n",
    );
    w.write("pg/postgresql.json", &(entries.join("\n") + "\n"));
}

/// flood-model's statement at 2026-11-27 10:00:00.120 UTC and atlas's at 2026-11-28 08:30 UTC,
/// each reading the view of roads line 1.
pub fn flood_and_atlas(flood: &str, atlas: &str) -> Vec<String> {
    vec![
        entry(
            "2026-11-27 10:00:00.120 UTC",
            "flood-model",
            1,
            "public.roads_v1",
            flood,
        ),
        entry(
            "2026-11-28 08:30:00.000 UTC",
            "atlas",
            2,
            "public.roads_v1",
            atlas,
        ),
    ]
}
