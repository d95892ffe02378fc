//! A TCP gate in front of a server: it passes bytes both ways untouched while open, and while
//! closed refuses every connection and cuts the ones under way, as a server that went down
//! would. For outages of servers whose protocol a test must not rewrite (an S3 store).

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// The gate, on a free port of 127.0.0.1; stopped on drop.
pub struct TcpGate {
    addr: SocketAddr,
    closed: watch::Sender<bool>,
    refused: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl TcpGate {
    /// An open gate to `target` (`host:port`).
    pub async fn start(target: &str) -> TcpGate {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (closed, _) = watch::channel(false);
        let refused = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let task = tokio::spawn({
            let closed = closed.clone();
            let refused = refused.clone();
            let target = target.to_string();
            async move {
                while let Ok((client, _)) = listener.accept().await {
                    if *closed.borrow() {
                        refused.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        drop(client);
                        continue;
                    }
                    tokio::spawn(pass(client, target.clone(), closed.subscribe()));
                }
            }
        });
        TcpGate {
            addr,
            closed,
            refused,
            task,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Closes the gate (refusing and cutting connections) or opens it again.
    pub fn set_closed(&self, closed: bool) {
        self.closed.send_replace(closed);
    }

    /// How many connections the gate refused while closed.
    pub fn refused(&self) -> usize {
        self.refused.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for TcpGate {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Copies both ways between `client` and `target` until either side ends or the gate closes.
async fn pass(mut client: TcpStream, target: String, mut closed: watch::Receiver<bool>) {
    let Ok(mut server) = TcpStream::connect(&target).await else {
        return;
    };
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
        _ = closed.wait_for(|closed| *closed) => {}
    }
}
