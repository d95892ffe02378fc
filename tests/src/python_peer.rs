use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::{free_port, venv_program, workspace};

/// A real A2A 1.0 agent on the official Python a2a-sdk (`tests/peers/a2a_peer.py`), killed on drop.
pub struct PythonPeer {
    child: Child,
    pub port: u16,
}

impl PythonPeer {
    /// Starts the peer with extra command-line `args` and waits until it listens.
    pub async fn start(args: &[&str]) -> PythonPeer {
        let port = free_port();
        let mut child = Command::new(venv_program("python"))
            .arg(workspace().join("tests/peers/a2a_peer.py"))
            .args(["--port", &port.to_string()])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("starting the Python a2a-sdk peer");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let ready = tokio::time::timeout(Duration::from_secs(30), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if line.starts_with("ready") {
                    return true;
                }
            }
            false
        })
        .await;
        assert_eq!(ready, Ok(true), "the Python peer did not start");
        PythonPeer { child, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}
