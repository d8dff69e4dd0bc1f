//! The start-up reference of the benchmarks: a Rust hello world, built with the same profile
//! as the clients it is compared with.

fn main() {
    println!("Hello, world!");
}
