//! A real S3-compatible server for the tests: moto's `moto_server`, on 127.0.0.1, killed on drop.

use std::time::Duration;

use tokio::process::{Child, Command};

use crate::wait::poll_until;
use crate::{free_port, venv_program};

/// The keys the tests sign with: moto takes any.
pub const TEST_KEY_ID: &str = "baton-test";
/// The secret of [`TEST_KEY_ID`].
pub const TEST_SECRET: &str = "baton-test-secret";

/// `moto_server` on a free port of 127.0.0.1. It keeps its buckets in memory, so a restart
/// starts it empty.
pub struct S3Server {
    child: Child,
    pub port: u16,
}

impl S3Server {
    /// Starts the server and waits until it answers.
    pub async fn start() -> S3Server {
        let port = free_port();
        let child = spawn(port).await;
        S3Server { child, port }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates `bucket` (S3's CreateBucket, unsigned: moto does not check signatures).
    pub async fn create_bucket(&self, bucket: &str) {
        let response = reqwest::Client::new()
            .put(format!("{}/{bucket}", self.url()))
            .send()
            .await
            .expect("creating the bucket");
        assert!(response.status().is_success(), "{response:?}");
    }

    /// Kills the server at once, as a crash would, and reaps it.
    pub async fn kill(&mut self) {
        self.child.kill().await.ok();
    }

    /// Starts the server again on the same port, empty.
    pub async fn start_again(&mut self) {
        self.child.kill().await.ok();
        self.child = spawn(self.port).await;
    }
}

async fn spawn(port: u16) -> Child {
    let mut command = Command::new(venv_program("moto_server"));
    baton_cli::child_process::dies_with_parent(&mut command);
    let child = command
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("starting moto_server: run scripts/setup.sh");
    let url = format!("http://127.0.0.1:{port}/");
    poll_until("moto_server to answer", Duration::from_secs(30), || async {
        reqwest::get(&url).await.ok().map(|_| ())
    })
    .await;
    child
}
