//! What the dispatch targets share: one runtime, and one real daemon (a SQLite store in a
//! temporary directory, the WebSocket settings) and its method tables for every input.

use std::sync::{Arc, LazyLock};

use clap::Parser;
use hld::config::{Args, Config};
use hld::daemon::Daemon;
use hld::logging::LogControl;
use hld::rpc::Router;
use hld::store::Store;
use tokio_util::sync::CancellationToken;

pub static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
});

pub static DAEMON: LazyLock<(tempfile::TempDir, Arc<Daemon>)> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = |name: &str| dir.path().join(name).display().to_string();
    let args = Args::try_parse_from([
        "hld",
        "--socket",
        &path("hld.sock"),
        "--database",
        &path("hld.db"),
        "--claude-path",
        &path("no-claude-here"),
        "--max-message-size",
        "65536",
        "--ws",
        "127.0.0.1:0",
    ])
    .expect("args");
    let config = Config::from_args(args).expect("config");
    let daemon = RUNTIME.block_on(async {
        let store = Store::open(&config.database).expect("store");
        Daemon::new(
            config,
            store,
            LogControl::detached(),
            CancellationToken::new(),
            // No notifier runs: the daemon has no channel to tell of.
            Default::default(),
        )
        .expect("daemon")
    });
    (dir, daemon)
});


/// The method table of the socket's NDJSON clients, and of guests (stdio, WebSocket).
pub static ROUTERS: LazyLock<(Router<Daemon>, Router<Daemon>)> =
    LazyLock::new(|| (hld::server::router(false), hld::server::router(true)));
