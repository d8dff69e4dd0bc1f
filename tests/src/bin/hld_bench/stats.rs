//! Small statistics: percentiles of one run's latencies, and the median [min–max] spread of a
//! figure over the rounds.

use serde::{Deserialize, Serialize};

/// The time on CLOCK_MONOTONIC, which every process of the machine reads alike, in ns.
pub fn monotonic_ns() -> anyhow::Result<u64> {
    let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)?;
    Ok(u64::try_from(std::time::Duration::from(now).as_nanos())?)
}

/// Percentiles of a run's per-operation latencies, in microseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Latency {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Largest.
    pub max_us: f64,
}

impl Latency {
    /// Percentiles of `nanos` (sorted in place).
    pub fn of_nanos(nanos: &mut [u64]) -> Latency {
        nanos.sort_unstable();
        let at = |p: f64| -> f64 {
            if nanos.is_empty() {
                return 0.0;
            }
            let i = ((nanos.len() as f64 - 1.0) * p).round() as usize;
            nanos[i] as f64 / 1000.0
        };
        Latency {
            p50_us: at(0.50),
            p99_us: at(0.99),
            max_us: at(1.0),
        }
    }
}

/// The spread of one figure over the rounds.
#[derive(Debug, Clone, Copy)]
pub struct Spread {
    /// Median over the rounds.
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (at least one).
    pub fn of(values: &[f64]) -> Spread {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let median = match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        };
        Spread {
            median,
            min: v.first().copied().unwrap_or(f64::NAN),
            max: v.last().copied().unwrap_or(f64::NAN),
        }
    }

    /// `median [min–max]` with `fmt` applied to each value.
    pub fn show(&self, fmt: impl Fn(f64) -> String) -> String {
        if self.min == self.max {
            return fmt(self.median);
        }
        format!("{} [{}–{}]", fmt(self.median), fmt(self.min), fmt(self.max))
    }
}

/// A number with a thousands suffix: 412k, 1.23M.
pub fn si(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// A duration given in microseconds, in a readable unit.
pub fn us(v: f64) -> String {
    if v >= 10_000.0 {
        format!("{:.1} ms", v / 1000.0)
    } else if v >= 1000.0 {
        format!("{:.2} ms", v / 1000.0)
    } else if v >= 100.0 {
        format!("{v:.0} µs")
    } else {
        format!("{v:.1} µs")
    }
}

/// A ratio.
pub fn ratio(v: f64) -> String {
    format!("{v:.2}")
}

/// Mebibytes from kibibytes.
pub fn mib(kib: f64) -> String {
    format!("{:.1} MiB", kib / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_even_and_odd_counts() {
        assert_eq!(Spread::of(&[3.0, 1.0, 2.0]).median, 2.0);
        assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
        let s = Spread::of(&[5.0, 1.0, 3.0]);
        assert_eq!((s.min, s.max), (1.0, 5.0));
    }

    #[test]
    fn percentiles_pick_the_nearest_rank() {
        let mut v: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        let l = Latency::of_nanos(&mut v);
        assert_eq!(l.max_us, 100.0);
        assert!((l.p50_us - 50.0).abs() <= 1.0);
        assert_eq!(l.p99_us, 99.0);
    }
}
