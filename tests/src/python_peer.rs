//! A real A2A peer for the tests: the official Python a2a-sdk running `tests/peers/a2a_peer.py`.

use std::time::{Duration, Instant};

use serde_json::Value;

use tokio::process::{Child, Command};

use crate::wait::poll_seeing;
use crate::{free_port, spawn_ready, venv_program, workspace};

/// A real A2A 1.0 agent on the official Python a2a-sdk (`tests/peers/a2a_peer.py`), killed on drop.
///
/// The peer is scripted by its arguments (`--behaviour complete|work|park|auth|fail|long|die|hang`,
/// `--push`, `--replay-history`, …; see the script's docstring) and reports what it saw at
/// `GET /_stats`, which [`PythonPeer::stats`] and [`PythonPeer::wait_for`] read.
pub struct PythonPeer {
    child: Child,
    args: Vec<String>,
    pub port: u16,
}

impl PythonPeer {
    /// Starts the peer with extra command-line `args` and waits until it listens.
    pub async fn start(args: &[&str]) -> PythonPeer {
        Self::start_on(free_port(), args).await
    }

    /// As [`PythonPeer::start`], on `port`: an agent that comes up where Baton was told it is.
    pub async fn start_on(port: u16, args: &[&str]) -> PythonPeer {
        let args: Vec<String> = args.iter().map(ToString::to_string).collect();
        let child = spawn(port, &args).await;
        PythonPeer { child, args, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Kills the peer at once (SIGKILL) and reaps it, as a crash would.
    pub fn kill(&mut self) {
        self.child.start_kill().ok();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !matches!(self.child.try_wait(), Ok(Some(_))) {
            assert!(Instant::now() < deadline, "the Python peer did not die");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits up to 15 s for the peer to exit by itself (the `die` behaviour) and reaps it.
    pub async fn exited(&mut self) -> std::process::ExitStatus {
        tokio::time::timeout(Duration::from_secs(15), self.child.wait())
            .await
            .expect("the Python peer is still running")
            .expect("waiting for the Python peer")
    }

    /// Kills the peer if it still runs, then starts it again with the same arguments on the same
    /// port. Its tasks and statistics start from scratch.
    pub async fn restart(&mut self) {
        self.child.kill().await.ok();
        self.child = spawn(self.port, &self.args).await;
    }

    /// What the peer saw so far: `GET /_stats`.
    pub async fn stats(&self) -> Value {
        let response = reqwest::get(format!("{}/_stats", self.url()))
            .await
            .expect("reading the Python peer's /_stats");
        response.json().await.expect("the peer's /_stats is JSON")
    }

    /// Polls `/_stats` every 50 ms until `check` holds, and returns those stats; panics naming
    /// `what` after 15 s.
    pub async fn wait_for(&self, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        self.wait_for_within(what, Duration::from_secs(15), check)
            .await
    }

    /// As [`wait_for`](Self::wait_for), for at most `within`.
    pub async fn wait_for_within(
        &self,
        what: &str,
        within: Duration,
        check: impl Fn(&Value) -> bool,
    ) -> Value {
        let what = format!("the Python peer: {what}");
        poll_seeing(&what, within, || async {
            let stats = self.stats().await;
            if check(&stats) { Ok(stats) } else { Err(stats) }
        })
        .await
    }
}

/// Runs the peer script on `port` and waits for its "ready" line.
async fn spawn(port: u16, args: &[String]) -> Child {
    let mut command = Command::new(venv_program("python"));
    command
        .arg(workspace().join("tests/peers/a2a_peer.py"))
        .args(["--port", &port.to_string()])
        .args(args);
    spawn_ready(command, "the Python a2a-sdk peer").await
}
