//! Writing the contexts file for `hlyr context`: `hld_client::contexts` reads it (and says
//! why it must stay private to the user).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

pub use hld_client::contexts::{path, Contexts, Entry, LOCAL};

use crate::error::CliError;

/// Writes `contexts` (0600, in a 0700 directory if it has to make it), whole or not at all.
pub fn save(contexts: &Contexts) -> Result<(), CliError> {
    let path = path();
    let fail = |what: &Path, e: std::io::Error| {
        CliError::failure(format!("cannot write {}: {e}", what.display()))
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| fail(dir, e))?;
    let temporary = path.with_extension("json.new");
    let _ = std::fs::remove_file(&temporary);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temporary)
        .map_err(|e| fail(&temporary, e))?;
    let text = serde_json::to_string_pretty(contexts).expect("contexts serialise");
    file.write_all(format!("{text}\n").as_bytes())
        .map_err(|e| fail(&temporary, e))?;
    std::fs::rename(&temporary, &path).map_err(|e| fail(&path, e))
}
