//! Links `hlyr` as a position-dependent executable, for start-up time.
//!
//! `hlyr` is mostly run for one short command, so the page faults of its start-up are a large
//! part of its run time. As a position-independent executable, the loader must write the load
//! address into every pointer of its `.data.rel.ro` (vtables, clap and serde tables) before
//! `main`: a copy-on-write fault per page. Linked at a fixed address, those pointers are
//! resolved by the linker instead. The cost is that the executable's own image is not
//! randomised (the shared libraries and the stack still are); the daemon, which is long-lived
//! and serves a socket, stays position-independent.
fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
