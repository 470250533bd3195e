//! The pauses between attempts, in one place: every loop that waits for something shared to
//! come free (the store's locks, a HEAD that moved, a fetch racing another process of the same
//! checkout, a webhook receiver that failed) sleeps through a [`Pauses`].
//!
//! The schedule is backon's exponential backoff: each pause doubles from `first` up to `cap`.
//! With jitter, each pause adds up to itself again at random, so writers that collided do not
//! collide again in step. A webhook's pauses go without jitter: one client retrying one
//! receiver has nobody to fall out of step with, and its waits stay as documented.

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};

/// A schedule of pauses, endless: the loop that uses it keeps its own bound (attempts or a
/// deadline), since each loop's bound is part of its contract.
pub struct Pauses(backon::ExponentialBackoff);

impl Pauses {
    /// Doubling pauses from `first` up to `cap`, each with up to itself added at random.
    pub fn jittered(first: Duration, cap: Duration) -> Pauses {
        Pauses(builder(first, cap).with_jitter().build())
    }

    /// Doubling pauses from `first` up to `cap`, the same on every run.
    pub fn steady(first: Duration, cap: Duration) -> Pauses {
        Pauses(builder(first, cap).build())
    }

    /// The next pause, without waiting it.
    pub fn next_pause(&mut self) -> Duration {
        // Without a bound on times or total the schedule never ends; `cap` is the fallback
        // only in case a later backon changes that.
        self.0.next().unwrap_or(Duration::ZERO)
    }

    /// Wait the next pause.
    pub fn sleep(&mut self) {
        std::thread::sleep(self.next_pause());
    }
}

fn builder(first: Duration, cap: Duration) -> ExponentialBuilder {
    ExponentialBuilder::new()
        .with_min_delay(first)
        .with_max_delay(cap)
        .with_factor(2.0)
        .without_max_times()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_pauses_double_up_to_the_cap() {
        let ms = Duration::from_millis;
        let mut p = Pauses::steady(ms(250), ms(1000));
        let got: Vec<Duration> = (0..5).map(|_| p.next_pause()).collect();
        assert_eq!(got, [ms(250), ms(500), ms(1000), ms(1000), ms(1000)]);
    }

    #[test]
    fn jittered_pauses_stay_between_the_steady_pause_and_twice_it() {
        let ms = Duration::from_millis;
        let mut p = Pauses::jittered(ms(10), ms(80));
        for steady in [10, 20, 40, 80, 80, 80] {
            let got = p.next_pause();
            assert!(
                got >= ms(steady) && got <= ms(2 * steady),
                "{got:?} for {steady} ms"
            );
        }
    }
}
