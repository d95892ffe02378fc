//! The content store of `[content]`, opened once per process.

use std::sync::Arc;

use anyhow::Context;
use baton_config::{ContentSettings, ContentStoreSpec};
use baton_content::{ContentStore, S3Location};

/// The store `content` names. A directory is created if it is not there; an S3 store is not
/// reached until it is used, so a store that is down does not stop the process from starting.
pub fn open(content: &ContentSettings) -> anyhow::Result<Arc<ContentStore>> {
    let store = match &content.store {
        ContentStoreSpec::Directory(path) => ContentStore::directory(path),
        ContentStoreSpec::S3 {
            bucket,
            prefix,
            region,
            endpoint,
        } => ContentStore::s3(
            &S3Location {
                bucket: bucket.clone(),
                prefix: prefix.clone(),
                region: region.clone(),
                endpoint: endpoint.clone(),
                keys: None,
            },
            content.retry_for,
        ),
    };
    let store = store.context("opening the content store ([content])")?;
    tracing::info!(store = store.place(), "content store");
    Ok(Arc::new(store))
}
