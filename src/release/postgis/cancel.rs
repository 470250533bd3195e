//! Ctrl-C (SIGINT) and a supervisor's SIGTERM during a PostGIS profile cancel the scan on the
//! server. A client that just dies leaves the server scanning: PostgreSQL notices a vanished
//! client only when it next writes to it, which for one aggregate over a large table is at
//! the end. So while a profile's connection is armed, the signal sends the server the
//! connection's cancel request instead of ending the process; the scan then fails with
//! "canceling statement due to user request", and the command ends with its own exit code.
//!
//! The server cancels only a statement it is running: a request that arrives between two
//! messages of one (after its parse, before its execution, where the connection sits idle
//! for a moment) cancels nothing, and the statement then runs to its end. So after a signal
//! the request is sent again, every [`RESEND`], until the profile ends.
//!
//! Outside an armed profile the signal does what it always does: the process ends as the
//! default action would end it. A second signal while the first cancel is under way does the
//! same, so a user is never stuck with a process that will not stop.
//!
//! The signal thread is Unix's (signal-hook's iterator has no Windows form). On Windows the
//! wheel's binary keeps Ctrl-C's default: the process ends and the server's own limits
//! (`statement_timeout`) end the scan.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use super::connect::Canceller;

/// The connection a signal cancels, while a profile runs.
static ARMED: Mutex<Option<Canceller>> = Mutex::new(None);
/// Whether a signal cancelled a scan: set before the cancel request is sent, so the failed
/// statement is read as an interruption, not as a server error.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The thread that waits for signals, started once per process.
static LISTENING: OnceLock<bool> = OnceLock::new();
/// Whether an [`Armed`] lives: the cancel requests after a signal stop when it is dropped.
static LIVE: AtomicBool = AtomicBool::new(false);

/// How often the cancel request is sent again after a signal, until the profile ends.
const RESEND: std::time::Duration = std::time::Duration::from_millis(200);

/// While this lives, SIGINT and SIGTERM cancel the armed connection's statement.
pub struct Armed(());

impl Drop for Armed {
    fn drop(&mut self) {
        LIVE.store(false, Ordering::SeqCst);
        if let Ok(mut slot) = ARMED.lock() {
            *slot = None;
        }
    }
}

/// Arm `canceller` for the signals. When the signal handler cannot be installed, the signals
/// keep their default action: the process ends and the server's own limits apply.
pub fn arm(canceller: Canceller) -> Armed {
    LISTENING.get_or_init(listen);
    LIVE.store(true, Ordering::SeqCst);
    if let Ok(mut slot) = ARMED.lock() {
        *slot = Some(canceller);
    }
    Armed(())
}

/// Start the thread that waits for SIGINT and SIGTERM; whether it started.
#[cfg(unix)]
fn listen() -> bool {
    use signal_hook::consts::{SIGINT, SIGTERM};
    match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        Ok(mut signals) => std::thread::Builder::new()
            .name("postgis-cancel".into())
            .spawn(move || {
                for signal in signals.forever() {
                    on_signal(signal);
                }
            })
            .is_ok(),
        Err(_) => false,
    }
}

#[cfg(not(unix))]
fn listen() -> bool {
    false
}

#[cfg(unix)]
fn on_signal(signal: i32) {
    let armed = ARMED.lock().ok().and_then(|mut slot| slot.take());
    match armed {
        Some(canceller) => {
            INTERRUPTED.store(true, Ordering::SeqCst);
            canceller.cancel();
            // Sent again on a thread of its own, so that this one is free for a second
            // signal, which ends the process.
            let again = move || {
                while LIVE.load(Ordering::SeqCst) {
                    std::thread::sleep(RESEND);
                    if LIVE.load(Ordering::SeqCst) {
                        canceller.cancel();
                    }
                }
            };
            let _ = std::thread::Builder::new()
                .name("postgis-cancel-again".into())
                .spawn(again);
        }
        None => {
            let _ = signal_hook::low_level::emulate_default_handler(signal);
        }
    }
}

/// Whether a signal has cancelled (or is cancelling) a scan of this process.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
