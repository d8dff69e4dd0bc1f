//! The hld daemon binary.
fn main() {}
