//! `hld-tui`: a live terminal dashboard for the hld daemon.

fn main() {
    println!("hld-tui {}", env!("CARGO_PKG_VERSION"));
}
