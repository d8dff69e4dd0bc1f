//! SQLite storage. Writes go through the one writer thread (`writer`), whose commits' [`Change`]s
//! a task of the runtime hands to the [`Sink`], in commit order; reads run on a small pool, one
//! snapshot each.

mod approvals;
mod control;
pub(crate) mod debug;
mod drafts;
mod error;
pub(crate) mod limits;
pub(crate) mod messages;
mod ops;
pub(crate) mod read;
mod schema;
pub(crate) mod settings;
#[cfg(test)]
mod tests;
mod types;
pub(crate) mod usage;
pub(crate) mod worktrees;
mod writer;

use std::fs::File;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, TryLockError};
use std::thread::JoinHandle;

use rusqlite::Connection;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio::sync::oneshot;

pub use error::{Result, StoreError};
pub use ops::CORRELATION_WINDOW;
pub use types::*;
pub use usage::TurnUsage;

pub(crate) use writer::Writer;
use writer::{Msg, Write};

const READERS: usize = 3;

/// The runtime's blocking threads: one per read connection, and one for the writer's close.
pub const BLOCKING_THREADS: usize = READERS + 1;

/// Where the store hands what each committed write changed: the daemon's bus.
pub trait Sink: Send + Sync + 'static {
    fn changed(&self, change: Change);
}

/// The handle to the database. Clones share the writer thread and the read pool.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    commands: Sender<Msg>,
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
    writer: Mutex<Option<JoinHandle<()>>>,
    closed: AtomicBool,
    /// `<database>.lock`, `flock`ed until the store is closed (see [`lock`]).
    lock: Mutex<Option<File>>,
    /// The queue of the task that hands committed changes to the sink.
    sink: OnceLock<UnboundedSender<Relayed>>,
}

/// What the writer thread (or a caller waiting for it) queues for the sink's task.
enum Relayed {
    /// One write's changes, once committed.
    Changes(Vec<Change>),
    /// Answered once everything queued before it has gone to the sink.
    Flush(oneshot::Sender<()>),
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (creating 0600 in a 0700 directory) and migrates the database; refuses a newer one,
    /// and a directory or file that another user could read or change (see `check_files`).
    pub fn open(path: &Path) -> Result<Store> {
        check_files(path)?;
        create_private_file(path)?;
        let lock = lock(path)?;
        let mut conn = schema::open_writer(path)?;
        schema::migrate(&mut conn)?;
        let readers = (0..READERS)
            .map(|_| schema::open_reader(path).map(Mutex::new))
            .collect::<Result<Vec<_>>>()?;
        let (commands, received) = mpsc::channel();
        let mut writer = Writer::new(conn);
        writer.checkpoint_apart(schema::open_reader(path)?)?;
        let writer = std::thread::Builder::new()
            .name("hld-store-writer".into())
            .spawn(move || writer::run(writer, received))
            .map_err(|source| StoreError::Io {
                context: "starting the store writer thread".into(),
                source,
            })?;
        Ok(Store {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                commands,
                readers,
                next_reader: AtomicUsize::new(0),
                writer: Mutex::new(Some(writer)),
                closed: AtomicBool::new(false),
                lock: Mutex::new(Some(lock)),
                sink: OnceLock::new(),
            }),
        })
    }

    /// Opens a fresh database in a new temporary directory (kept alive by the returned guard).
    #[cfg(test)]
    pub(crate) fn open_temp() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = Store::open(&dir.path().join("hld.db")).expect("open store");
        (dir, store)
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Hands the page caches of the idle connections back to the allocator.
    pub async fn release_memory(&self) -> Result<()> {
        for slot in &self.inner.readers {
            if let Ok(conn) = slot.try_lock() {
                conn.execute_batch("PRAGMA shrink_memory")?;
            }
        }
        self.write(|w, _| Ok(w.conn.execute_batch("PRAGMA shrink_memory")?))
            .await
    }

    /// Hands every committed write's changes to `sink` from now on (before that, they drop), on
    /// a task of the runtime: the writer thread only queues them, so that it wakes the runtime
    /// once for what it committed together rather than once per subscriber of each event.
    pub fn publish_to(&self, sink: impl Sink) {
        let (queue, mut queued) = unbounded_channel();
        if self.inner.sink.set(queue).is_err() {
            return;
        }
        tokio::spawn(async move {
            while let Some(relayed) = queued.recv().await {
                match relayed {
                    Relayed::Changes(changes) => changes.into_iter().for_each(|c| sink.changed(c)),
                    Relayed::Flush(flushed) => drop(flushed.send(())),
                }
            }
        });
    }

    /// Resolves once the changes of every write committed so far have gone to the sink.
    pub async fn published(&self) {
        let (flushed, done) = oneshot::channel();
        let queued = self
            .inner
            .sink
            .get()
            .map(|q| q.send(Relayed::Flush(flushed)));
        if let Some(Ok(())) = queued {
            let _ = done.await;
        }
    }

    /// Queues `f` for the writer thread; once committed, its changes go to the sink in commit
    /// order. The write stands even if the future is dropped; it resolves once committed.
    pub(crate) fn write<T, F>(&self, f: F) -> impl Future<Output = Result<T>> + Send + 'static
    where
        T: Send + 'static,
        F: FnOnce(&mut Writer, &mut Vec<Change>) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let apply = move |w: &mut Writer| {
            let mut changes = Vec::new();
            f(w, &mut changes).map(|answer| (answer, changes))
        };
        let inner = Arc::clone(&self.inner);
        let done = move |outcome: Result<(T, Vec<Change>)>| {
            let outcome = outcome.map(|(answer, changes)| {
                if let Some(sink) = inner.sink.get().filter(|_| !changes.is_empty()) {
                    let _ = sink.send(Relayed::Changes(changes));
                }
                answer
            });
            // The caller may have stopped waiting; the write stands regardless.
            let _ = reply.send(outcome);
        };
        let queued = if self.inner.closed.load(Ordering::Acquire) {
            Err(StoreError::Closed)
        } else {
            let write = Box::new(Write::new(apply, done));
            self.inner
                .commands
                .send(Msg::Write(write))
                .map_err(|_| StoreError::Closed)
        };
        async move {
            queued?;
            answer.await.map_err(|_| StoreError::Closed)?
        }
    }

    /// Runs `f` on a read connection, inside one read transaction, off the async workers.
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || inner.with_reader(f))
            .await
            .map_err(|_| StoreError::Panicked)?
    }

    /// Applies the queued writes, checkpoints, and stops the writer; later calls fail `Closed`.
    pub async fn close(&self) -> Result<()> {
        self.inner.closed.store(true, Ordering::Release);
        let (reply, rx) = oneshot::channel();
        let checkpoint = match self.inner.commands.send(Msg::Close(reply)) {
            // A dropped reply means another close got there first.
            Ok(()) => rx.await.unwrap_or(Ok(())),
            Err(_) => Ok(()),
        };
        let handle = self
            .inner
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = handle {
            tokio::task::spawn_blocking(move || handle.join())
                .await
                .map_err(|_| StoreError::Panicked)?
                .map_err(|_| StoreError::Panicked)?;
        }
        self.inner
            .lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        checkpoint
    }
}

impl Inner {
    /// Runs `f` on a free read connection (or waits for one) inside a read transaction.
    fn with_reader<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        for slot in &self.readers {
            match slot.try_lock() {
                Ok(conn) => return in_read_tx(&conn, f),
                Err(TryLockError::Poisoned(p)) => return in_read_tx(&p.into_inner(), f),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        let i = self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len();
        let conn = self.readers[i]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        in_read_tx(&conn, f)
    }
}

/// Runs `f` in a read transaction so that its queries see one snapshot.
fn in_read_tx<T>(conn: &Connection, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
    let tx = conn.unchecked_transaction()?;
    let out = f(&tx);
    tx.rollback()?;
    out
}

/// The database's directory must be the user's own and not writable by others (made 0700
/// if missing: [`private_dir::ensure`]), so that no other user can swap its files; those that
/// exist (the database, its WAL and shared memory) must be the user's own regular files, and
/// lose any access by others (a conversation is private).
fn check_files(path: &Path) -> Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let io = |context: String| move |source| StoreError::Io { context, source };
    crate::private_dir::ensure(dir.unwrap_or(Path::new(".")), "the database's directory")
        .map_err(io("checking the database's directory".into()))?;
    let me = nix::unistd::geteuid().as_raw();
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let file = Path::new(&name);
        // Followed: a link of the user's own (in a directory only they can change) may lead
        // elsewhere, but what it leads to is checked.
        let Ok(meta) = std::fs::metadata(file) else {
            continue;
        };
        let refused =
            |problem: String| StoreError::Invalid(format!("{} {problem}", file.display()));
        if !meta.is_file() {
            return Err(refused("is not a regular file".into()));
        }
        if meta.uid() != me {
            return Err(refused(format!(
                "belongs to another user (uid {}, you are uid {me})",
                meta.uid()
            )));
        }
        if meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))
                .map_err(io(format!("making {} private", file.display())))?;
        }
    }
    Ok(())
}

/// Takes the `flock` of `<database>.lock` (made 0600 beside it), so that a second daemon on
/// the same database is refused rather than taking the first one's running sessions for
/// orphans of a crash; the kernel releases it when the process ends, however it ends. A file
/// of its own: closing another descriptor of the database itself would drop the `fcntl`
/// locks SQLite holds on it.
fn lock(path: &Path) -> Result<File> {
    use rustix::fs::{flock, FlockOperation};
    use std::os::unix::fs::OpenOptionsExt;
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    let lock_path = path.with_file_name(name);
    let io = |source| StoreError::Io {
        context: format!("locking {}", lock_path.display()),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock_path)
        .map_err(io)?;
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(file),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(StoreError::InUse(path.display().to_string())),
        Err(e) => Err(io(e.into())),
    }
}

/// Creates the (empty) database file 0600 if missing, so neither it nor its WAL is others'.
fn create_private_file(path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(StoreError::Io {
            context: format!("creating {}", path.display()),
            source,
        }),
    }
}
