//! Support for the end-to-end tests: a `TestDaemon` that runs the real `hld` binary.
