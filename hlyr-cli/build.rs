//! Links `hlyr` as a position-dependent executable, for start-up time.
//!
//! `hlyr` is mostly run for one short command, so the page faults of its start-up are a large
//! part of its run time (about 8 µs each here). As a position-independent executable, the
//! loader must write the load address into every pointer of its 70 KB of `.data.rel.ro`
//! (vtables, clap and serde tables) before `main`: a copy-on-write fault per page, 17 in all.
//! Linked at a fixed address, those pointers are resolved by the linker instead. The cost is
//! that the executable's own image is not randomised (the shared libraries and the stack
//! still are); the daemon, which is long-lived and serves a socket, stays position-independent.
//!
//! As shipped (`cargo build-hlyr`, `.cargo/config.toml`), `hlyr` is also linked statically,
//! which needs the code itself compiled position-dependent (`-C relocation-model=static`): with
//! position-independent code, rustc would link a static PIE, which `-no-pie` breaks.
fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
