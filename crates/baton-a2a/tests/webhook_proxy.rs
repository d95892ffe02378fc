//! A push goes straight to its webhook even when the worker's environment names a proxy: a
//! proxy would resolve the webhook's host itself, past the address check, or refuse to reach a
//! private one at all. Its own test binary, since the proxy variables hold for the whole process.

use std::sync::Arc;

use baton_a2a::webhook::{Webhooks, deliver};
use baton_content::ContentStore;
use baton_core::deployment_key::DeploymentKey;
use baton_proto::{PushConfig, PushDelivery, TaskState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A webhook on 127.0.0.1 that answers every request 200 and counts them.
async fn webhook() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let taken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = taken.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = vec![0; 64 * 1024];
            // One read holds the small request; the answer closes the connection.
            let _ = socket.read(&mut request).await;
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = socket
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
        }
    });
    (url, taken)
}

#[tokio::test]
async fn a_push_ignores_the_proxy_the_environment_names() {
    // Nothing listens on port 9 (discard): a client that took the proxy could not push.
    for variable in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "ALL_PROXY"] {
        #[allow(
            unsafe_code,
            reason = "this test binary sets its environment before any thread reads it"
        )]
        // SAFETY: set before the runtime's other tasks or any client reads the environment.
        unsafe {
            std::env::set_var(variable, "http://127.0.0.1:9");
        }
    }
    let (url, taken) = webhook().await;
    // A client that follows the environment goes to the proxy and fails.
    assert!(reqwest::Client::new().post(&url).send().await.is_err());

    let key = Arc::new(DeploymentKey::from_secret("a test deployment secret"));
    let webhooks = Webhooks::new(true, None, key);
    let store = ContentStore::directory(tempfile::tempdir().unwrap().path()).unwrap();
    let delivery = PushDelivery {
        config: PushConfig {
            id: "c1".into(),
            url,
            token: None,
            authentication: None,
        },
        task_id: "t1".into(),
        context_id: "ctx1".into(),
        state: TaskState::Completed,
        sub_state: None,
        message: Some("done".into()),
        at: "2026-12-06T15:00:00Z".into(),
        artifacts: Vec::new(),
    };
    deliver(&webhooks, &store, &delivery)
        .await
        .expect("the push reaches the webhook directly");
    assert_eq!(taken.load(std::sync::atomic::Ordering::SeqCst), 1);
}
