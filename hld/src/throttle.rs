//! Log lines for what a peer can make happen without bound (failed accepts, refused or
//! evicted connections, timed-out messages): at most one line a second for each kind, which
//! says how many happened since the last, so that a flood cannot fill the log.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a throttled line may be written.
const EVERY: Duration = Duration::from_secs(1);

/// One kind of throttled line. `static` for lines of the whole daemon.
#[derive(Debug, Default)]
pub struct Throttle {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// When the last line was written.
    logged: Option<Instant>,
    /// Occurrences since then.
    unlogged: u64,
}

impl Throttle {
    /// A throttle that has written nothing yet.
    pub const fn new() -> Throttle {
        Throttle {
            state: Mutex::new(State {
                logged: None,
                unlogged: 0,
            }),
        }
    }

    /// Counts one occurrence. `Some(n)` when its line is to be written now, `n` being the
    /// occurrences it stands for (this one and those not written since the last line).
    pub fn hit(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.unlogged += 1;
        if state.logged.is_some_and(|at| at.elapsed() < EVERY) {
            return None;
        }
        state.logged = Some(Instant::now());
        Some(std::mem::take(&mut state.unlogged))
    }
}

#[cfg(test)]
mod tests {
    use super::Throttle;

    #[test]
    fn one_line_a_second_tells_how_many_it_stands_for() {
        let throttle = Throttle::new();
        assert_eq!(throttle.hit(), Some(1));
        for _ in 0..9 {
            assert_eq!(throttle.hit(), None);
        }
        // The next line, a second on, counts the nine unwritten and itself.
        throttle.state.lock().unwrap().logged = Some(std::time::Instant::now() - super::EVERY);
        assert_eq!(throttle.hit(), Some(10));
    }
}
