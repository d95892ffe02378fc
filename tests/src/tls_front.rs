//! A TLS front for a test's Temporal dev server (`tests/peers/tls_proxy.py`), which has no TLS of
//! its own: it requires a client certificate, and writes the test PKI it was made with.

use std::path::PathBuf;

use tokio::process::{Child, Command};

use crate::{free_port, spawn_ready, venv_program, workspace};

/// The name the front's certificate is valid for (and 127.0.0.1 is not).
pub const SERVER_NAME: &str = "temporal.test";

/// Killed on drop, with its PKI directory.
pub struct TlsFront {
    port: u16,
    pki: tempfile::TempDir,
    _child: Child,
}

impl TlsFront {
    /// Starts in front of the plaintext server at `upstream` (host:port).
    pub async fn start(upstream: &str) -> TlsFront {
        let pki = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut command = Command::new(venv_program("python"));
        command
            .arg(workspace().join("tests/peers/tls_proxy.py"))
            .args(["--upstream", upstream])
            .args(["--port", &port.to_string()])
            .arg("--dir")
            .arg(pki.path());
        let child = spawn_ready(command, "the TLS front").await;
        TlsFront {
            port,
            pki,
            _child: child,
        }
    }

    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// A file of its PKI: `ca.pem`, `client.pem`, `client.key`, `other-ca.pem`,
    /// `other-client.pem`, `other-client.key`.
    pub fn file(&self, name: &str) -> PathBuf {
        self.pki.path().join(name)
    }
}
