//! `hlyr`: the terminal workflow for the hld daemon.

fn main() {
    println!("hlyr {}", env!("CARGO_PKG_VERSION"));
}
