//! Log lines for what a peer can make happen without bound: at most one line a second for
//! each kind, saying how many happened since the last, so that a flood cannot fill the log.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a throttled line may be written.
const EVERY: Duration = Duration::from_secs(1);

/// One kind of throttled line. `static` for lines of the whole daemon.
#[derive(Debug)]
pub struct Throttle {
    burst: u32,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// When the current second began (at its first line).
    window: Option<Instant>,
    written: u32,
    /// Occurrences not yet told by a line.
    unlogged: u64,
}

impl Default for Throttle {
    fn default() -> Throttle {
        Throttle::new()
    }
}

impl Throttle {
    pub const fn new() -> Throttle {
        Throttle::burst(1)
    }

    /// Up to `burst` lines a second, for mistakes a peer may make a few of at once.
    pub const fn burst(burst: u32) -> Throttle {
        Throttle {
            burst,
            state: Mutex::new(State {
                window: None,
                written: 0,
                unlogged: 0,
            }),
        }
    }

    /// Counts one occurrence; `Some(n)` when its line is due, `n` counting those since the last.
    pub fn hit(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.unlogged += 1;
        if state.window.is_none_or(|at| at.elapsed() >= EVERY) {
            state.window = Some(Instant::now());
            state.written = 0;
        }
        if state.written == self.burst {
            return None;
        }
        state.written += 1;
        Some(std::mem::take(&mut state.unlogged))
    }
}

#[cfg(test)]
mod tests {
    use super::Throttle;

    #[test]
    fn each_second_writes_its_first_lines_then_one_counts_the_rest() {
        for burst in [1, 3] {
            let throttle = Throttle::burst(burst);
            for _ in 0..burst {
                assert_eq!(throttle.hit(), Some(1));
            }
            for _ in 0..9 {
                assert_eq!(throttle.hit(), None);
            }
            throttle.state.lock().unwrap().window = Some(std::time::Instant::now() - super::EVERY);
            assert_eq!(throttle.hit(), Some(10));
        }
    }
}
