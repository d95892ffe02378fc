//! The content store, Baton's claim check: a file or a large part is written once, addressed by
//! the SHA-256 of its bytes, and what crosses Temporal (workflow inputs, signals, activity
//! payloads, history) is its [`ContentRef`], never the bytes.
//!
//! Two places hold content, through the `object_store` crate: a directory (the embedded default,
//! beside the dev server's database) and any S3-compatible object store (clusters). Every call
//! is bounded: a store that does not answer is retried with backoff for a bounded time, then the
//! call fails with [`ContentError::Unavailable`], naming the store, and nothing is lost: the
//! caller still holds the bytes it meant to write, and a read can be asked again.
//!
//! Content is kept for a bounded time from its last write ([`ContentStore::sweep`]), so a store
//! does not grow for ever: long enough for every task that holds a reference to it to be gone.

#![warn(missing_docs)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use baton_proto::ContentRef;
use bytes::Bytes;
use futures::StreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, RetryConfig};
use sha2::{Digest, Sha256};

/// The prefix of every digest: the hash it names.
const SHA256: &str = "sha256:";

/// The longest one HTTP request to an object store may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest a connection to an object store may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where content is kept, and for how long a call keeps trying a store that does not answer.
pub struct ContentStore {
    objects: Arc<dyn ObjectStore>,
    /// Under this prefix of the store: `<prefix>/sha256/<hex>`.
    prefix: ObjectPath,
    /// The store as a person reads it, for errors and logs: `directory /var/lib/baton/content`,
    /// `s3://bucket/prefix`.
    place: String,
    /// The longest one call may take, its retries included.
    bound: Duration,
}

/// An S3-compatible object store: AWS S3, or any server that speaks its API (MinIO, Ceph,
/// moto). Credentials come from the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`), never from a file Baton reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Location {
    /// The bucket.
    pub bucket: String,
    /// The key prefix under which Baton keeps its content; empty for the bucket's root.
    pub prefix: String,
    /// The region, like `eu-west-1`.
    pub region: String,
    /// The server's URL, for a store that is not AWS itself (`http://127.0.0.1:9000`).
    pub endpoint: Option<String>,
    /// Keys given here rather than taken from the environment: for tests against a local
    /// server. `None` in production, where the environment (or the instance's role) gives them.
    pub keys: Option<S3Keys>,
}

/// An access key and its secret.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Keys {
    /// The access key id.
    pub id: String,
    /// The secret access key.
    pub secret: String,
}

impl std::fmt::Debug for S3Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Keys")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Why a call to the content store failed.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    /// The store did not answer, or refused, within the call's bound: worth asking again later.
    #[error(
        "the content store ({place}) did not take the call (tried for up to {secs}s): {reason}; check that it is up and that Baton's credentials for it are valid"
    )]
    Unavailable {
        /// The store.
        place: String,
        /// The longest the call may try, retries included.
        secs: u64,
        /// What the store or the network said.
        reason: String,
    },
    /// The store does not hold the content: it was never written there, or was removed.
    #[error("the content store ({place}) holds no content {digest}")]
    Missing {
        /// The store.
        place: String,
        /// The content asked for.
        digest: String,
    },
    /// The store gave back bytes that are not the content asked for.
    #[error(
        "the content store ({place}) gave back {got} for content {digest} ({size} bytes): the stored copy is damaged"
    )]
    Damaged {
        /// The store.
        place: String,
        /// The content asked for.
        digest: String,
        /// Its size.
        size: u64,
        /// What came back instead.
        got: String,
    },
    /// The store cannot be set up as configured.
    #[error("the content store cannot be set up: {0}")]
    Setup(String),
}

impl ContentError {
    /// Whether asking again later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, ContentError::Unavailable { .. })
    }
}

/// What a [`ContentStore::sweep`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    /// How many contents.
    pub objects: u64,
    /// Their bytes in all.
    pub bytes: u64,
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut digest = String::with_capacity(SHA256.len() + 64);
    digest.push_str(SHA256);
    for byte in hash {
        digest.push_str(&format!("{byte:02x}"));
    }
    digest
}

impl ContentStore {
    /// Content kept in the directory `path`, created if it is not there.
    pub fn directory(path: &Path) -> Result<ContentStore, ContentError> {
        std::fs::create_dir_all(path).map_err(|e| {
            ContentError::Setup(format!(
                "the directory {} cannot be created: {e}",
                path.display()
            ))
        })?;
        let objects = LocalFileSystem::new_with_prefix(path).map_err(|e| {
            ContentError::Setup(format!(
                "the directory {} cannot be used: {e}",
                path.display()
            ))
        })?;
        Ok(ContentStore {
            objects: Arc::new(objects),
            prefix: ObjectPath::default(),
            place: format!("directory {}", path.display()),
            bound: REQUEST_TIMEOUT,
        })
    }

    /// Content kept in the S3-compatible store at `location`. A call to it retries with backoff
    /// for up to `retry_for`, then fails naming the store.
    pub fn s3(location: &S3Location, retry_for: Duration) -> Result<ContentStore, ContentError> {
        let mut builder = AmazonS3Builder::from_env()
            .with_bucket_name(&location.bucket)
            .with_region(&location.region)
            .with_retry(RetryConfig {
                backoff: BackoffConfig::default(),
                max_retries: 10,
                retry_timeout: retry_for,
            })
            .with_client_options(
                ClientOptions::new()
                    .with_timeout(REQUEST_TIMEOUT)
                    .with_connect_timeout(CONNECT_TIMEOUT),
            );
        if let Some(keys) = &location.keys {
            builder = builder
                .with_access_key_id(&keys.id)
                .with_secret_access_key(&keys.secret);
        }
        if let Some(endpoint) = &location.endpoint {
            let url = url::Url::parse(endpoint).map_err(|e| {
                ContentError::Setup(format!("the endpoint {endpoint:?} is not a URL: {e}"))
            })?;
            builder = builder
                .with_endpoint(endpoint)
                .with_allow_http(url.scheme() == "http")
                // Servers other than AWS take the bucket in the path.
                .with_virtual_hosted_style_request(false);
        }
        let objects = builder
            .build()
            .map_err(|e| ContentError::Setup(format!("bucket {:?}: {e}", location.bucket)))?;
        let prefix = location.prefix.trim_matches('/');
        Ok(ContentStore {
            objects: Arc::new(objects),
            prefix: ObjectPath::from(prefix),
            place: if prefix.is_empty() {
                format!("s3://{}", location.bucket)
            } else {
                format!("s3://{}/{prefix}", location.bucket)
            },
            bound: retry_for + REQUEST_TIMEOUT,
        })
    }

    /// The store as a person reads it: `directory /var/lib/baton/content`, `s3://bucket/prefix`.
    pub fn place(&self) -> &str {
        &self.place
    }

    /// Keeps `bytes` and returns their reference. The same bytes are kept once, under their
    /// digest: a second put of them (a retried activity, the same file sent again, by any task)
    /// writes them over themselves, which restarts the time they are kept (see [`sweep`]).
    ///
    /// [`sweep`]: ContentStore::sweep
    pub async fn put(&self, bytes: Bytes) -> Result<ContentRef, ContentError> {
        let content = ContentRef {
            digest: digest_of(&bytes),
            size: bytes.len() as u64,
        };
        let path = self.path_of(&content.digest);
        self.bounded(self.objects.put(&path, bytes.into()))
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(content)
    }

    /// Removes every content last written before `cutoff`: what no task has put since then.
    /// Returns what it removed.
    pub async fn sweep(&self, cutoff: SystemTime) -> Result<Swept, ContentError> {
        let under = self.prefix.clone().join("sha256");
        let mut listing = self.objects.list(Some(&under));
        let mut swept = Swept::default();
        while let Some(meta) = self
            .bounded(async { listing.next().await.transpose() })
            .await
            .map_err(|e| self.unavailable(e))?
        {
            if SystemTime::from(meta.last_modified) >= cutoff {
                continue;
            }
            match self.bounded(self.objects.delete(&meta.location)).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {
                    swept.objects += 1;
                    swept.bytes += meta.size;
                }
                Err(error) => return Err(self.unavailable(error)),
            }
        }
        Ok(swept)
    }

    /// The bytes of `content`, checked against its digest.
    pub async fn get(&self, content: &ContentRef) -> Result<Bytes, ContentError> {
        let path = self.path_of(&content.digest);
        let read = self
            .bounded(async { self.objects.get(&path).await?.bytes().await })
            .await;
        let bytes = match read {
            Ok(bytes) => bytes,
            Err(object_store::Error::NotFound { .. }) => {
                return Err(ContentError::Missing {
                    place: self.place.clone(),
                    digest: content.digest.clone(),
                });
            }
            Err(error) => return Err(self.unavailable(error)),
        };
        let got = digest_of(&bytes);
        if got != content.digest || bytes.len() as u64 != content.size {
            return Err(ContentError::Damaged {
                place: self.place.clone(),
                digest: content.digest.clone(),
                size: content.size,
                got: format!("{} bytes with digest {got}", bytes.len()),
            });
        }
        Ok(bytes)
    }

    /// Removes `content`; removing content that is not there is not an error.
    pub async fn delete(&self, content: &ContentRef) -> Result<(), ContentError> {
        let path = self.path_of(&content.digest);
        match self.bounded(self.objects.delete(&path)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(self.unavailable(error)),
        }
    }

    /// `<prefix>/sha256/<hex>`.
    fn path_of(&self, digest: &str) -> ObjectPath {
        let hex = digest.strip_prefix(SHA256).unwrap_or(digest);
        self.prefix.clone().join("sha256").join(hex)
    }

    /// `call`, cut off past the store's bound.
    async fn bounded<T>(
        &self,
        call: impl Future<Output = object_store::Result<T>>,
    ) -> object_store::Result<T> {
        tokio::time::timeout(self.bound, call)
            .await
            .unwrap_or_else(|_| {
                Err(object_store::Error::Generic {
                    store: "content",
                    source: format!("no answer within {}s", self.bound.as_secs()).into(),
                })
            })
    }

    fn unavailable(&self, error: object_store::Error) -> ContentError {
        ContentError::Unavailable {
            place: self.place.clone(),
            secs: self.bound.as_secs(),
            reason: error.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_is_the_sha256_of_the_bytes_in_lowercase_hex() {
        assert_eq!(
            digest_of(b"test"),
            "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
        );
        assert_eq!(
            digest_of(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    fn store() -> (tempfile::TempDir, ContentStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = ContentStore::directory(&dir.path().join("content")).unwrap();
        (dir, store)
    }

    fn files_in(dir: &Path) -> usize {
        std::fs::read_dir(dir.join("content").join("sha256"))
            .map(Iterator::count)
            .unwrap_or(0)
    }

    #[tokio::test]
    async fn content_put_in_a_directory_reads_back_byte_for_byte() {
        let (dir, store) = store();
        let png: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
        let content = store.put(Bytes::from(png.clone())).await.unwrap();
        assert_eq!(content.size, 70_000);
        assert_eq!(content.digest, digest_of(&png));
        assert_eq!(store.get(&content).await.unwrap(), png);
        assert_eq!(files_in(dir.path()), 1);
    }

    #[tokio::test]
    async fn the_same_bytes_are_kept_once() {
        let (dir, store) = store();
        let a = store.put(Bytes::from_static(b"a,b\n1,2\n")).await.unwrap();
        let b = store.put(Bytes::from_static(b"a,b\n1,2\n")).await.unwrap();
        assert_eq!(a.digest, b.digest);
        assert_eq!(files_in(dir.path()), 1);
        store.put(Bytes::from_static(b"other")).await.unwrap();
        assert_eq!(files_in(dir.path()), 2);
    }

    #[tokio::test]
    async fn content_that_is_not_there_is_missing_and_a_damaged_copy_is_caught() {
        let (dir, store) = store();
        let absent = ContentRef {
            digest: digest_of(b"never written"),
            size: 13,
        };
        let error = store.get(&absent).await.unwrap_err();
        assert!(matches!(error, ContentError::Missing { .. }), "{error}");
        assert!(error.to_string().contains(&absent.digest), "{error}");
        assert!(!error.is_retryable());

        let content = store
            .put(Bytes::from_static(b"the real bytes"))
            .await
            .unwrap();
        let hex = content.digest.strip_prefix(SHA256).unwrap();
        std::fs::write(dir.path().join("content/sha256").join(hex), b"tampered").unwrap();
        let error = store.get(&content).await.unwrap_err();
        assert!(matches!(error, ContentError::Damaged { .. }), "{error}");
        assert!(error.to_string().contains("damaged"), "{error}");
    }

    #[tokio::test]
    async fn a_delete_removes_the_content_and_a_second_delete_is_not_an_error() {
        let (dir, store) = store();
        let content = store.put(Bytes::from_static(b"short-lived")).await.unwrap();
        store.delete(&content).await.unwrap();
        store.delete(&content).await.unwrap();
        assert_eq!(files_in(dir.path()), 0);
        assert!(matches!(
            store.get(&content).await,
            Err(ContentError::Missing { .. })
        ));
    }

    #[test]
    fn a_directory_that_cannot_be_created_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        let Err(error) = ContentStore::directory(&file.join("content")) else {
            panic!("a directory under a file was accepted");
        };
        assert!(error.to_string().contains("a-file"), "{error}");
    }

    #[test]
    fn an_s3_endpoint_that_is_not_a_url_is_refused_naming_it() {
        let location = S3Location {
            bucket: "baton".into(),
            prefix: "content".into(),
            region: "us-east-1".into(),
            endpoint: Some("not a url".into()),
            keys: None,
        };
        let Err(error) = ContentStore::s3(&location, Duration::from_secs(1)) else {
            panic!("a bad endpoint was accepted");
        };
        assert!(error.to_string().contains("not a url"), "{error}");
    }
}
