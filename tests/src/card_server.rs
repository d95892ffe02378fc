//! A hand-written HTTP server for card fetch tests: it answers what the test scripts, including
//! what no real agent would send, and records every request.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Request};
use axum::response::Response;
use tokio::task::JoinHandle;

/// What a [`CardServer`] saw of one request.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: HeaderMap,
}

type Responder = Arc<dyn Fn(&str) -> Response + Send + Sync>;

/// A hand-written HTTP server on 127.0.0.1 that answers each request with `respond(path)` and
/// records every request. It plays hostile or odd agents; it stops on drop.
pub struct CardServer {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Recorded>>>,
    task: JoinHandle<()>,
}

impl CardServer {
    pub async fn start(respond: impl Fn(&str) -> Response + Send + Sync + 'static) -> CardServer {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let state = (seen.clone(), Arc::new(respond) as Responder);
        let app = Router::new().fallback(handle).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        CardServer { addr, seen, task }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for CardServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub fn json_response(body: String) -> Response {
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(body))
        .unwrap()
}

/// A response with `status`, `headers` and `body`, as any HTTP server might answer.
pub fn response(status: u16, headers: &[(&str, &str)], body: Vec<u8>) -> Response {
    let mut builder = Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Body::from(body)).unwrap()
}

async fn handle(
    State((seen, respond)): State<(Arc<Mutex<Vec<Recorded>>>, Responder)>,
    request: Request<Body>,
) -> Response {
    let path = request.uri().path().to_string();
    seen.lock().unwrap().push(Recorded {
        path: path.clone(),
        headers: request.headers().clone(),
    });
    respond(&path)
}
