//! `hld-tui`: a live terminal dashboard for the hld daemon. [`app`] holds the state and the
//! pure `update`, [`view`] draws it, [`render`] turns conversation events into lines, and
//! [`runtime`] connects them to the terminal and the daemon.

pub mod app;
pub mod columns;
pub mod daemons;
pub mod diffview;
mod fleet;
mod help;
pub mod keys;
mod launch;
pub mod lists;
mod load;
pub mod markdown;
mod order;
mod pickers;
pub mod preview;
pub mod render;
pub mod runtime;
pub mod usage;
pub mod view;
