//! `hlyr man [--dir DIR]`: hlyr's manual page, made from its command tree (clap_mangen):
//! hlyr(1) on stdout, or with `--dir` one page per command (`hlyr.1`, `hlyr-launch.1`, …)
//! written into that directory.

use std::io::Write;
use std::path::PathBuf;

use clap::CommandFactory;

use crate::error::{CliError, Exit};
use crate::output::Render;
use crate::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write a page per command into this directory (made if missing) instead.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

#[derive(serde::Serialize)]
struct Written {
    dir: PathBuf,
    pages: usize,
}

impl Render for Written {
    fn human(&self) -> String {
        format!(
            "wrote {} manual pages to {}",
            self.pages,
            self.dir.display()
        )
    }
}

/// hlyr(1): clap_mangen's sections, but the exit codes (`--help`'s closing text) as an EXIT
/// STATUS section of their own, a tagged paragraph per code, where clap_mangen would fill
/// their lines together.
fn root_page(command: clap::Command) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(command);
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    man.render_subcommands_section(&mut page)?;
    page.extend(exit_status(crate::EXIT_CODES).as_bytes());
    man.render_version_section(&mut page)?;
    Ok(page)
}

/// The exit codes' text (`  N    what`, continued on lines indented further; then
/// paragraphs) as roff.
fn exit_status(text: &str) -> String {
    let roff = |line: &str| line.trim().replace('\\', "\\e").replace('-', "\\-");
    let mut out = String::from(".SH \"EXIT STATUS\"\n");
    for line in text.lines().skip(1) {
        let code = line
            .split_whitespace()
            .next()
            .filter(|w| w.parse::<u8>().is_ok());
        match code {
            Some(code) if line.starts_with("  ") => {
                let what = line.trim_start().trim_start_matches(code);
                out.push_str(&format!(".TP\n\\fB{code}\\fR\n{}\n", roff(what)));
            }
            _ if line.trim().is_empty() => out.push_str(".PP\n"),
            _ => out.push_str(&format!("{}\n", roff(line))),
        }
    }
    out
}

pub fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let command = crate::Cli::command();
    let Some(dir) = args.dir else {
        let page = root_page(command)?;
        let mut out = std::io::stdout().lock();
        out.write_all(&page)?;
        out.flush()?;
        return Ok(Exit::Ok);
    };
    let cannot = |e: std::io::Error| {
        CliError::failure(format!(
            "cannot write manual pages to {}: {e}",
            dir.display()
        ))
    };
    std::fs::create_dir_all(&dir).map_err(cannot)?;
    clap_mangen::generate_to(command.clone(), &dir).map_err(cannot)?;
    std::fs::write(dir.join("hlyr.1"), root_page(command).map_err(cannot)?).map_err(cannot)?;
    let pages = std::fs::read_dir(&dir)
        .map_err(cannot)?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("hlyr") && name.ends_with(".1")
        })
        .count();
    ctx.out.print(&Written { dir, pages })?;
    Ok(Exit::Ok)
}
