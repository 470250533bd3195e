//! Benchmark harness for the git layer (run by `bench/store.sh`): walk the whole first-parent
//! history of a store with the paths each commit changed under `contracts/`, `history/` and
//! `notifications/`, and read every changed blob, old and new side, as `check` must.
//!
//! `cargo run --release --example store_walk -- STORE`

use std::time::Instant;

use contracts::store::git::Repo;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: store_walk STORE_DIR")?;
    let start = Instant::now();
    let repo = Repo::open(std::path::Path::new(&dir))?;
    let history = repo.history(None, &["contracts/", "history/", "notifications/"])?;
    let walked = start.elapsed();
    let (mut changes, mut blobs, mut bytes) = (0usize, 0usize, 0usize);
    // Newest first: packs made by git (a clone, `git gc`) store the newest version of a file
    // whole and older ones as deltas of newer ones, so this order finds each delta base in the
    // pack cache; oldest first reads these blobs about 5x slower on a cloned store.
    for commit in history.iter().rev() {
        for change in &commit.changes {
            changes += 1;
            for id in [change.old, change.new].into_iter().flatten() {
                blobs += 1;
                bytes += repo.blob(id)?.len();
            }
        }
    }
    eprintln!(
        "{} commits, {changes} changed paths, {blobs} blobs ({:.1} MB) read; \
         history {:.3}s, total {:.3}s",
        history.len(),
        bytes as f64 / 1e6,
        walked.as_secs_f64(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
