//! A stand-in for the `claude` CLI.
fn main() {}
