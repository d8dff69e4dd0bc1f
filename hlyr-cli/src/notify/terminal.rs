//! Telling the terminal: the bell and the notification escape of
//! [`hld_client::view::alert`], on stderr and only when stderr is a terminal. Written past
//! anstream, which would strip them under NO_COLOR.

use std::io::{IsTerminal, Write};

use hld_client::view::alert::Alert;

/// Rings the terminal on stderr, when it is one.
pub fn ring(alert: Alert, title: &str, text: &str) {
    let mut err = std::io::stderr();
    if err.is_terminal() {
        let _ = err.write_all(alert.sequence(title, text).as_bytes());
        let _ = err.flush();
    }
}
