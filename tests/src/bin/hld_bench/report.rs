//! The report: the whole of `BENCHMARKS.md`, with the machine, the command, one table per
//! group (figure, baseline, ratio, spread, target, verdict) and how each figure was taken.

use std::fmt::Write as _;
use std::process::Command;
use std::time::Duration;

/// Whether a row met its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Met.
    Pass,
    /// Missed.
    Fail,
    /// Reported only: no target.
    Info,
}

impl Verdict {
    /// `pass` if `ok`, else `FAIL`.
    pub fn of(ok: bool) -> Verdict {
        if ok {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }

    fn show(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "**FAIL**",
            Verdict::Info => "reported",
        }
    }
}

/// One figure.
#[derive(Debug, Clone)]
pub struct Row {
    /// What was measured.
    pub name: String,
    /// The daemon's figure: median [min–max] over the rounds.
    pub figure: String,
    /// The baseline's figure, same rounds.
    pub baseline: String,
    /// The ratio, taken round by round.
    pub ratio: String,
    /// The goal.
    pub target: String,
    /// Whether the median met it.
    pub verdict: Verdict,
}

impl Row {
    /// The row as a reported figure: no target.
    pub fn reported(self) -> Row {
        Row {
            target: "reported".into(),
            verdict: Verdict::Info,
            ..self
        }
    }
}

/// One group of figures.
#[derive(Debug, Clone)]
pub struct Section {
    /// `1. health round trip`, …
    pub title: String,
    /// How the figures were taken.
    pub method: String,
    /// The processes run for one round, as commands.
    pub commands: Vec<String>,
    /// The figures.
    pub rows: Vec<Row>,
    /// Observations of this run (counts checked, set-up times).
    pub notes: Vec<String>,
}

/// What the report says about the run itself.
#[derive(Debug, Clone)]
pub struct Header {
    /// The command that reproduces it.
    pub command: String,
    /// A smoke run.
    pub smoke: bool,
    /// Built with the release profile.
    pub release: bool,
    /// How long it took.
    pub elapsed: Duration,
    /// Rounds and counts.
    pub plan: String,
    /// The 1-minute load average before and after.
    pub load: (String, String),
    /// The share of the machine's CPU time the hypervisor gave to others during the run.
    pub stolen: Option<f64>,
}

/// The CPU time counters of `/proc/stat`'s first line, in clock ticks: (all, stolen).
pub fn cpu_ticks() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = text
        .lines()
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal (guest time is counted in user).
    let steal = *fields.get(7)?;
    Some((fields.iter().take(8).sum(), steal))
}

/// The share of CPU time stolen between two [`cpu_ticks`] readings.
pub fn stolen_share(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> Option<f64> {
    let ((all0, steal0), (all1, steal1)) = (before?, after?);
    let all = all1.checked_sub(all0).filter(|&t| t > 0)?;
    Some(steal1.saturating_sub(steal0) as f64 / all as f64)
}

/// The 1-minute load average, as `/proc/loadavg` gives it.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

fn first_line(path: &str, prefix: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(prefix))?;
    Some(line.split_once(':')?.1.trim().to_owned())
}

fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let model = first_line("/proc/cpuinfo", "model name").unwrap_or_else(|| "unknown".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "unknown".into());
    let memory = first_line("/proc/meminfo", "MemTotal")
        .and_then(|m| m.split_whitespace().next()?.parse::<f64>().ok())
        .map_or_else(
            || "?".into(),
            |kib| format!("{:.0} GiB", kib / 1024.0 / 1024.0),
        );
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into());
    format!("{cpus} vCPU {model}, {memory} RAM, Linux {kernel}; {rustc}")
}

/// Renders the report.
pub fn render(header: &Header, sections: &[Section]) -> anyhow::Result<String> {
    let mut out = String::new();
    writeln!(out, "# Benchmarks")?;
    writeln!(out)?;
    writeln!(
        out,
        "Written by `hld-bench` (`tests/src/bin/hld_bench/`), the whole file: do not edit it, \
         re-run instead:"
    )?;
    writeln!(out)?;
    writeln!(out, "```sh\n{}\n```", header.command)?;
    writeln!(out)?;
    writeln!(
        out,
        "- Date: {}",
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC")
    )?;
    writeln!(out, "- Machine: {}", machine())?;
    writeln!(
        out,
        "- Build: {} profile{}",
        if header.release { "release" } else { "dev" },
        if header.smoke {
            "; **smoke run: tiny counts, the figures mean nothing**"
        } else {
            ""
        }
    )?;
    writeln!(
        out,
        "- Run: {}; took {:.0} s; 1-minute load average {} before, {} after; CPU time stolen \
         by the hypervisor {} (other processes' and other machines' work slows every figure, \
         the baselines' too)",
        header.plan,
        header.elapsed.as_secs_f64(),
        header.load.0,
        header.load.1,
        header
            .stolen
            .map_or_else(|| "unknown".into(), |s| format!("{:.1}%", s * 100.0))
    )?;
    writeln!(
        out,
        "- Method (see `../shared/reference/perf-limits.md`): every round runs every \
         configuration once, each with a fresh server process; a ratio is taken within each \
         round, and the table shows the median [min–max] over the rounds. *Pinned* means the \
         server and the load generator both run under `taskset -c 0`; unpinned rows let the \
         scheduler place them (on this 2-vCPU VM a cross-CPU wake-up costs about 18 µs, so \
         unpinned latency is bimodal). Load generators share the machine with the server."
    )?;
    writeln!(out)?;
    writeln!(out, "## Summary")?;
    writeln!(out)?;
    writeln!(out, "| figure | hld | baseline | ratio | target | result |")?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for section in sections {
        for row in &section.rows {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                row.name,
                row.figure,
                row.baseline,
                row.ratio,
                row.target,
                row.verdict.show()
            )?;
        }
    }
    for section in sections {
        writeln!(out)?;
        writeln!(out, "## {}", section.title)?;
        writeln!(out)?;
        writeln!(out, "{}", section.method)?;
        writeln!(out)?;
        writeln!(out, "| figure | hld | baseline | ratio | target | result |")?;
        writeln!(out, "|---|---|---|---|---|---|")?;
        for row in &section.rows {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                row.name,
                row.figure,
                row.baseline,
                row.ratio,
                row.target,
                row.verdict.show()
            )?;
        }
        if !section.notes.is_empty() {
            writeln!(out)?;
            for note in &section.notes {
                writeln!(out, "- {note}")?;
            }
        }
        writeln!(out)?;
        writeln!(out, "Processes of one round:")?;
        writeln!(out)?;
        writeln!(out, "```sh")?;
        for command in &section.commands {
            writeln!(out, "{command}")?;
        }
        writeln!(out, "```")?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stolen_share_is_of_the_ticks_between_two_readings() {
        let share = stolen_share(Some((1000, 50)), Some((3000, 250))).unwrap();
        assert!((share - 0.1).abs() < 1e-9, "{share}");
        assert_eq!(stolen_share(Some((1000, 50)), Some((1000, 50))), None);
        assert_eq!(stolen_share(None, Some((1000, 50))), None);
        // This machine has the counters.
        let (all, steal) = cpu_ticks().unwrap();
        assert!(all > 0 && steal <= all);
    }
}
