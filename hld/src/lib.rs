//! The hld daemon library.
