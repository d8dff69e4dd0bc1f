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

pub fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let command = crate::Cli::command();
    let Some(dir) = args.dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(command).render(&mut page)?;
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
    clap_mangen::generate_to(command, &dir).map_err(cannot)?;
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
