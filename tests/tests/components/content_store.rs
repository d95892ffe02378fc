//! The content store against a real S3-compatible server (moto): content reads back byte for
//! byte, a store that is down fails within the bound naming itself, and one that comes back
//! serves again.

use std::time::Duration;

use baton_content::{ContentError, ContentStore, S3Keys, S3Location, digest_of};
use baton_tests::s3_server::{S3Server, TEST_KEY_ID, TEST_SECRET};
use baton_tests::tcp_gate::TcpGate;
use bytes::Bytes;

fn location(server: &S3Server) -> S3Location {
    S3Location {
        bucket: "baton-content".into(),
        prefix: "agents/front-desk".into(),
        region: "us-east-1".into(),
        endpoint: Some(server.url()),
        keys: Some(S3Keys {
            id: TEST_KEY_ID.into(),
            secret: TEST_SECRET.into(),
        }),
    }
}

#[tokio::test]
async fn content_put_in_an_s3_store_reads_back_byte_for_byte_and_is_kept_once() {
    let server = S3Server::start().await;
    server.create_bucket("baton-content").await;
    let store = ContentStore::s3(&location(&server), Duration::from_secs(5)).unwrap();
    assert_eq!(store.place(), "s3://baton-content/agents/front-desk");

    let png: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
    let content = store.put(Bytes::from(png.clone())).await.unwrap();
    assert_eq!(content.digest, digest_of(&png));
    assert_eq!(store.get(&content).await.unwrap(), png);
    let again = store.put(Bytes::from(png.clone())).await.unwrap();
    assert_eq!(again.digest, content.digest);

    store.delete(&content).await.unwrap();
    assert!(matches!(
        store.get(&content).await,
        Err(ContentError::Missing { .. })
    ));
}

#[tokio::test]
async fn a_store_that_is_down_fails_within_its_bound_naming_itself_and_serves_once_back() {
    let mut server = S3Server::start().await;
    server.create_bucket("baton-content").await;
    let retry_for = Duration::from_secs(2);
    let store = ContentStore::s3(&location(&server), retry_for).unwrap();
    let csv = Bytes::from_static(b"month,total\nMarch,1200\n");
    store.put(csv.clone()).await.unwrap();

    server.kill().await;
    let started = std::time::Instant::now();
    let error = store
        .put(Bytes::from_static(b"while down"))
        .await
        .unwrap_err();
    assert!(error.is_retryable(), "{error}");
    assert!(
        error
            .to_string()
            .contains("s3://baton-content/agents/front-desk"),
        "{error}"
    );
    // Bounded: the retries stop after `retry_for`, and each try is cut off well before the
    // call's own limit (retry_for plus one request's timeout).
    assert!(
        started.elapsed() < Duration::from_secs(35),
        "{:?}",
        started.elapsed()
    );

    server.start_again().await;
    server.create_bucket("baton-content").await;
    let content = store.put(csv.clone()).await.unwrap();
    assert_eq!(store.get(&content).await.unwrap(), csv);
}

#[tokio::test]
async fn a_store_cut_off_is_retried_and_serves_once_reachable_again() {
    let server = S3Server::start().await;
    server.create_bucket("baton-content").await;
    let gate = TcpGate::start(&format!("127.0.0.1:{}", server.port)).await;
    let location = S3Location {
        endpoint: Some(gate.url()),
        ..location(&server)
    };
    let store = ContentStore::s3(&location, Duration::from_secs(2)).unwrap();
    gate.set_closed(true);
    let csv = Bytes::from_static(b"month,total\nMarch,1200\n");
    assert!(store.put(csv.clone()).await.unwrap_err().is_retryable());
    gate.set_closed(false);
    let content = tokio::time::timeout(Duration::from_secs(10), store.put(csv.clone()))
        .await
        .expect("a put once the store answers again")
        .unwrap();
    assert_eq!(store.get(&content).await.unwrap(), csv);
    // Kept before: found, not written again.
    assert_eq!(store.put(csv.clone()).await.unwrap(), content);
}

/// Content is kept from its last write: a sweep removes what was written before its cutoff, and
/// what was put again since is kept, in a directory and in an S3 store alike.
#[tokio::test]
async fn a_sweep_removes_what_no_task_wrote_since_its_cutoff() {
    let dir = tempfile::tempdir().unwrap();
    let server = S3Server::start().await;
    server.create_bucket("baton-content").await;
    let stores = [
        ContentStore::directory(dir.path()).unwrap(),
        ContentStore::s3(&location(&server), Duration::from_secs(5)).unwrap(),
    ];
    for store in stores {
        let old = store.put(Bytes::from_static(b"old")).await.unwrap();
        let again = store.put(Bytes::from_static(b"used again")).await.unwrap();
        let cutoff = later_than_every_write().await;
        store.put(Bytes::from_static(b"used again")).await.unwrap();
        let new = store.put(Bytes::from_static(b"new")).await.unwrap();

        let swept = store.sweep(cutoff).await.unwrap();
        assert_eq!(
            swept,
            baton_content::Swept {
                objects: 1,
                bytes: 3
            },
            "{}",
            store.place()
        );
        assert!(matches!(
            store.get(&old).await,
            Err(ContentError::Missing { .. })
        ));
        assert_eq!(store.get(&again).await.unwrap(), "used again");
        assert_eq!(store.get(&new).await.unwrap(), "new");
        assert_eq!(store.sweep(cutoff).await.unwrap().objects, 0);
    }
}

/// A moment after every write so far, by the clocks stores stamp writes with (whole seconds, on
/// some): the next whole second after now, once it has passed.
async fn later_than_every_write() -> std::time::SystemTime {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let next_second = std::time::UNIX_EPOCH + Duration::from_secs(now.as_secs() + 1);
    baton_tests::wait::poll_until("the next whole second", Duration::from_secs(3), || async {
        (std::time::SystemTime::now() > next_second).then_some(())
    })
    .await;
    next_second
}
