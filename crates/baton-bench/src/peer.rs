//! `baton-bench peer`: the test kit's fast A2A peer ([`baton_tests::fast_peer`]) as a child
//! process of the bench, so the bench process's RSS is the worker's (plus the small stateless
//! model and the client), not the peer's store of parked tasks.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use axum::serve::ListenerExt;
use baton_cli::shutdown::ShutdownSignals;
use baton_tests::fast_peer::{self, PeerStats, STATS_PATH};
use tokio::process::Command;

use super::child::ChildProcess;

pub use baton_tests::fast_peer::PARK_MARKER;

/// The line the peer prints on stdout once it listens; the URL follows it.
const READY_LINE: &str = "bench peer listening on ";

/// `baton-bench peer`: serves the peer until SIGTERM or Ctrl-C.
#[derive(clap::Args, Debug)]
pub struct PeerArgs {
    /// The port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
}

/// Serves the peer until SIGTERM or Ctrl-C.
pub async fn serve(args: PeerArgs) -> anyhow::Result<ExitCode> {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], args.port)))
        .await
        .context("binding the bench peer on 127.0.0.1")?;
    let url = format!("http://{}", listener.local_addr()?);
    let app = fast_peer::router(&url)?;
    let signals = ShutdownSignals::install().context("installing the signal handlers")?;
    println!("{READY_LINE}{url}");
    // Nagle's algorithm off, as the servers real agents run on have it (uvicorn, Node, Go):
    // with it on, each event of the stream after the first waits for the reader's delayed ACK.
    let listener = listener.tap_io(|tcp| {
        tcp.set_nodelay(true).ok();
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            signals.requested().await;
        })
        .await
        .context("serving the bench peer")?;
    Ok(ExitCode::SUCCESS)
}

/// The peer as a child process of the bench; killed when dropped, and by the kernel if the
/// bench dies (PR_SET_PDEATHSIG).
pub struct PeerProcess {
    child: ChildProcess,
    handle: PeerHandle,
}

/// What the bench's phases need of the running peer.
#[derive(Clone)]
pub struct PeerHandle {
    /// The peer's base URL (`http://127.0.0.1:PORT`), as `agents[].url` names it.
    pub url: String,
    pub pid: Option<u32>,
    http: reqwest::Client,
}

impl PeerHandle {
    pub async fn stats(&self) -> anyhow::Result<PeerStats> {
        let stats = self
            .http
            .get(format!("{}{STATS_PATH}", self.url))
            .timeout(Duration::from_secs(10))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        Ok(stats)
    }
}

impl PeerProcess {
    /// Starts `baton-bench peer` and waits for its URL.
    pub async fn start() -> anyhow::Result<PeerProcess> {
        let exe = std::env::current_exe().context("finding the baton-bench binary")?;
        let mut command = Command::new(exe);
        command.args(["peer"]).env("RUST_LOG", "warn");
        let (child, url) = ChildProcess::start(command, "the bench peer", READY_LINE).await?;
        let handle = PeerHandle {
            url,
            pid: child.pid(),
            http: reqwest::Client::new(),
        };
        Ok(PeerProcess { child, handle })
    }

    pub fn url(&self) -> &str {
        &self.handle.url
    }

    pub fn handle(&self) -> PeerHandle {
        self.handle.clone()
    }

    /// SIGTERM, then SIGKILL after 5 s.
    pub async fn stop(self) {
        self.child.stop().await;
    }
}
