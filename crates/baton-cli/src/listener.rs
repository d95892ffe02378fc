//! The gateway's listener: at most `server.max_connections` open connections, and each must
//! send its first request's headers within `server.header_timeout`, so clients that connect and
//! never finish a request (slowloris) cannot take the server or the worker beside it. A
//! connection past the cap waits in the kernel's backlog until one closes.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::serve::Listener;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Where one request's headers end, in HTTP/1.1 and in the HTTP/2 connection preface alike.
const HEADERS_END: &[u8; 4] = b"\r\n\r\n";

/// A TCP listener with a cap on open connections and a deadline for the first headers.
pub struct GuardedListener {
    inner: TcpListener,
    open: Arc<Semaphore>,
    header_timeout: Duration,
}

impl GuardedListener {
    pub(crate) fn new(
        inner: TcpListener,
        max_connections: usize,
        header_timeout: Duration,
    ) -> Self {
        GuardedListener {
            inner,
            open: Arc::new(Semaphore::new(max_connections)),
            header_timeout,
        }
    }
}

impl Listener for GuardedListener {
    type Io = GuardedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let permit = self
            .open
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let (stream, addr) = Listener::accept(&mut self.inner).await;
        // HTTP/2 writes an answer's headers, data and trailers apart: with Nagle's algorithm
        // the last waits for the peer's delayed ACK, 40 ms on every gRPC call. Best effort.
        stream.set_nodelay(true).ok();
        let stream = GuardedStream {
            inner: stream,
            _permit: permit,
            headers: Some(HeaderWait {
                deadline: Box::pin(tokio::time::sleep(self.header_timeout)),
                tail: Vec::with_capacity(HEADERS_END.len()),
            }),
        };
        (stream, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// One accepted connection: it holds its place under the cap until it closes.
pub struct GuardedStream {
    inner: TcpStream,
    _permit: OwnedSemaphorePermit,
    /// Until the first request's headers have arrived.
    headers: Option<HeaderWait>,
}

struct HeaderWait {
    deadline: Pin<Box<tokio::time::Sleep>>,
    /// The last bytes read, so an end of headers split across two reads is found.
    tail: Vec<u8>,
}

impl HeaderWait {
    /// Whether the headers end within what was read (with what came before it).
    fn ended_by(&mut self, read: &[u8]) -> bool {
        let mut window = std::mem::take(&mut self.tail);
        window.extend_from_slice(read);
        if window.windows(HEADERS_END.len()).any(|w| w == HEADERS_END) {
            return true;
        }
        let keep = window.len().saturating_sub(HEADERS_END.len() - 1);
        self.tail = window.split_off(keep);
        false
    }
}

impl AsyncRead for GuardedStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(wait) = &mut this.headers
            && wait.deadline.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the request's headers did not arrive within server.header_timeout",
            )));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let (Poll::Ready(Ok(())), Some(wait)) = (&polled, &mut this.headers)
            && wait.ended_by(&buf.filled()[before..])
        {
            this.headers = None;
        }
        polled
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait() -> HeaderWait {
        HeaderWait {
            deadline: Box::pin(tokio::time::sleep(Duration::from_secs(60))),
            tail: Vec::new(),
        }
    }

    #[tokio::test]
    async fn the_end_of_headers_is_found_whole_or_split_across_reads() {
        assert!(wait().ended_by(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        for split in 1..4 {
            let mut w = wait();
            let whole = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
            let (a, b) = whole.split_at(whole.len() - split);
            assert!(!w.ended_by(a), "{split}");
            assert!(w.ended_by(b), "{split}");
        }
        let mut w = wait();
        for byte in b"GET / HTTP/1.1\r\n\r\n" {
            if w.ended_by(&[*byte]) {
                return;
            }
        }
        panic!("a byte at a time, the end was not found");
    }

    #[tokio::test]
    async fn unfinished_headers_are_not_an_end() {
        let mut w = wait();
        assert!(!w.ended_by(b"GET / HTTP/1.1\r\nHost: x\r\n"));
        assert!(!w.ended_by(b"X-Slow: 1\r\n"));
        assert!(w.tail.len() < HEADERS_END.len());
    }

    #[tokio::test]
    async fn a_client_that_never_finishes_its_headers_is_cut_off_and_others_get_in() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut guarded = GuardedListener::new(listener, 1, Duration::from_millis(200));

        let mut slow = TcpStream::connect(addr).await.unwrap();
        slow.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        let (mut served, _) = guarded.accept().await;
        let mut buf = [0u8; 256];
        let mut read = 0;
        let error = loop {
            match served.read(&mut buf[read..]).await {
                Ok(n) => read += n,
                Err(error) => break error,
            }
        };
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(served.headers.is_some());

        // Its place under the cap of one is free once it is dropped.
        drop(served);
        let _next = TcpStream::connect(addr).await.unwrap();
        let (_accepted, _) = tokio::time::timeout(Duration::from_secs(5), guarded.accept())
            .await
            .expect("the freed place takes the next connection");
    }

    #[tokio::test]
    async fn every_connection_sends_small_writes_at_once() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut guarded = GuardedListener::new(listener, 4, Duration::from_secs(5));
        let _client = TcpStream::connect(addr).await.unwrap();
        let (served, _) = guarded.accept().await;
        assert!(served.inner.nodelay().unwrap(), "Nagle's algorithm is off");
    }
}
