//! The `hld` binary: parse flags, set up logging, run the server (single-threaded by default).

use std::process::ExitCode;

use clap::Parser;
use hld::config::{Args, Command, Config, McpServer};
use tokio_util::sync::CancellationToken;

/// jemalloc, whose background thread hands freed pages back to the system a few seconds after
/// a load, where glibc's malloc keeps what a burst of connections left fragmented.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(Command::Mcp { server }) = args.command {
        return serve_mcp(server, args.socket);
    }
    let config = match Config::from_args(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("hld: {e}");
            return ExitCode::from(2);
        }
    };
    let (log, sink) = match hld::logging::init(
        &config.log_level,
        config.log_file.as_deref(),
        config.no_color,
    ) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("hld: {e}");
            return ExitCode::from(2);
        }
    };
    tracing::info!(
        version = %hld::handlers::VERSION,
        pid = std::process::id(),
        level = %config.log_level.to_ascii_lowercase(),
        %sink,
        stdio = config.stdio,
        "hld starting"
    );
    if config.stdio {
        return serve_stdio(&config.socket);
    }
    warn_of_a_local_config_file();
    raise_open_files_limit();
    purge_in_the_background();
    // One thread serves every connection by default, so nothing waits for a thread to wake.
    let mut builder = match config.worker_threads {
        0 => tokio::runtime::Builder::new_current_thread(),
        n => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n);
            b
        }
    };
    let runtime = match builder
        .enable_all()
        .max_blocking_threads(hld::store::BLOCKING_THREADS)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the runtime");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let shutdown = CancellationToken::new();
        tokio::spawn(watch_signals(shutdown.clone()));
        hld::server::run(config, log, shutdown).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "daemon failed");
            eprintln!("hld: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `hld mcp SERVER`: serves an MCP server on stdio (diagnostics to stderr) until stdin closes.
fn serve_mcp(server: McpServer, socket: Option<std::path::PathBuf>) -> ExitCode {
    let McpServer::ClaudeApprovals = server;
    let served = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
        .and_then(|runtime| runtime.block_on(hld::mcp::serve_stdio(socket.as_deref())));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hld mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `hld --stdio`: exits 0 when the editor or a signal ends it, 1 when the daemon goes away.
fn serve_stdio(socket: &std::path::Path) -> ExitCode {
    let ended = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
        .and_then(|runtime| {
            let ended = runtime.block_on(hld::stdio::run(socket));
            // The relay's thread blocked reading stdin would hold a plain drop up.
            runtime.shutdown_background();
            ended
        });
    let code = match ended {
        Ok(hld::stdio::Ended::Cleanly) => 0,
        Ok(hld::stdio::Ended::DaemonGone) => {
            eprintln!("hld --stdio: the daemon at {} went away", socket.display());
            1
        }
        Err(e) => {
            eprintln!("hld --stdio: {e}");
            1
        }
    };
    ExitCode::from(code)
}

/// Says that a `humanlayer.json` here (where the Go daemon read one) is not read, and which is.
fn warn_of_a_local_config_file() {
    let local = std::path::Path::new("humanlayer.json");
    let read = hld_client::config::config_file_path();
    let same = |a: &std::path::Path, b: &std::path::Path| matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b);
    if local.exists() && !same(local, &read) {
        tracing::warn!(
            read = %read.display(),
            "./humanlayer.json is not read: a file in the current directory may be someone \
             else's and could name programs to run as you; put your settings in the file named \
             by `read`"
        );
    }
}

/// Raises the soft open-files limit to the hard one, as Go does: 1024 descriptors go fast.
fn raise_open_files_limit() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            Ok(()) => tracing::debug!(from = soft, to = hard, "raised the open files limit"),
            Err(e) => tracing::warn!(error = %e, soft, "cannot raise the open files limit"),
        },
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "cannot read the open files limit"),
    }
}

/// Cancels `shutdown` on SIGINT, SIGTERM or SIGHUP, logging the signal's name.
async fn watch_signals(shutdown: CancellationToken) {
    let mut signals = match hld::stdio::Signals::new() {
        Ok(signals) => signals,
        Err(e) => return tracing::error!("{e}"),
    };
    let name = signals.recv().await;
    tracing::info!(signal = %name, "received {name}, shutting down gracefully");
    shutdown.cancel();
}

/// Starts jemalloc's one background thread, which purges freed pages as they age.
fn purge_in_the_background() {
    let started = tikv_jemalloc_ctl::max_background_threads::write(1)
        .and_then(|()| tikv_jemalloc_ctl::background_thread::write(true));
    if let Err(e) = started {
        tracing::warn!(error = %e, "memory freed after a load will be kept");
    }
}
