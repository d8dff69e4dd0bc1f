//! A stand-in for a daemon gone wrong: a listener at its socket that takes each connection and
//! closes it at its first request, counting the requests it closed on.

use std::io::{BufRead, BufReader};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::{wait_for, WAIT};

/// A listener at `socket` that takes each connection and closes it at its first request, as
/// a daemon that drops its clients would; it counts the requests it closed on.
pub struct Closing {
    socket: PathBuf,
    closed: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Closing {
    /// Listens at `socket`, which must be free.
    pub fn listen(socket: &Path) -> Closing {
        let listener = UnixListener::bind(socket).expect("bind the closing listener");
        let (closed, stop) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (counted, stopped) = (Arc::clone(&closed), Arc::clone(&stop));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let counted = Arc::clone(&counted);
                std::thread::spawn(move || {
                    let mut line = String::new();
                    let read = BufReader::new(conn.expect("accept")).read_line(&mut line);
                    if read.is_ok_and(|n| n > 0) {
                        counted.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        Closing {
            socket: socket.to_owned(),
            closed,
            stop,
        }
    }

    /// How many requests it closed on so far.
    pub fn closed(&self) -> usize {
        self.closed.load(Ordering::SeqCst)
    }

    /// Waits until `n` requests were closed on.
    pub fn wait_closed(&self, n: usize) {
        let came = wait_for(WAIT, || (self.closed() >= n).then_some(()));
        assert!(came.is_some(), "fewer than {n} requests came");
    }
}

impl Drop for Closing {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = UnixStream::connect(&self.socket);
        let _ = std::fs::remove_file(&self.socket);
    }
}
