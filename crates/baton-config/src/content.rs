//! `[content]`: where files and large parts are kept (the content store), and what a message
//! may carry.

use std::path::{Path, PathBuf};
use std::time::Duration;

use baton_core::media_types;

use crate::error::Errors;
use crate::walk::Field;

/// `[content]`: the content store and the limits on the files and data a message carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentSettings {
    /// Where content is kept.
    pub store: ContentStoreSpec,
    /// How long one call keeps trying a store that does not answer before it fails.
    pub retry_for: Duration,
    /// The largest file or data part one message may carry, in bytes (decoded).
    pub max_part_bytes: usize,
    /// The most bytes of files and data the messages of one task may carry in all.
    pub max_task_bytes: u64,
    /// How long content is kept after it was last written: past it, the worker removes it.
    pub keep_for: Duration,
    /// Whether a file a message gives by URL is fetched (as a webhook is called) and kept like
    /// one sent as bytes; off, its URL is kept and never called.
    pub fetch_urls: bool,
    /// The media types a file part may have: exact (`image/png`), a family (`image/*`), or
    /// `*/*` for any.
    pub media_types: Vec<String>,
}

/// `content.store`: where content is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentStoreSpec {
    /// A directory on this machine, resolved against the settings file's directory.
    Directory(PathBuf),
    /// An S3-compatible object store; credentials come from the environment.
    S3 {
        /// The bucket.
        bucket: String,
        /// The key prefix under which this agent's content is kept.
        prefix: String,
        /// The region.
        region: String,
        /// The server's URL, for a store that is not AWS itself.
        endpoint: Option<String>,
    },
}

impl ContentSettings {
    /// Whether a file part of `media_type` may come in.
    pub fn accepts(&self, media_type: &str) -> bool {
        media_types::accepts(&self.media_types, media_type)
    }
}

const KEYS: [&str; 12] = [
    "store",
    "directory",
    "bucket",
    "prefix",
    "region",
    "endpoint",
    "retry_for",
    "max_part_bytes",
    "max_task_bytes",
    "media_types",
    "fetch_urls",
    "keep_for",
];
const DEFAULT_REGION: &str = "us-east-1";
const DEFAULT_RETRY_FOR: Duration = Duration::from_secs(60);
const MOST_RETRY_FOR: Duration = Duration::from_secs(5 * 60);
/// 5 MiB: a photo or a page of a scan; with base64's growth it fits the gateway's default
/// request size (`server.max_request_bytes`).
const DEFAULT_MAX_PART_BYTES: usize = 5 * 1024 * 1024;
const MOST_PART_BYTES: i64 = 64 * 1024 * 1024;
const DEFAULT_MAX_TASK_BYTES: u64 = 50 * 1024 * 1024;
/// 30 days: past the Temporal dev server's retention and a task's usual life.
const DEFAULT_KEEP_FOR: Duration = Duration::from_secs(30 * 24 * 3600);
const LEAST_KEEP_FOR: Duration = Duration::from_secs(3600);
const MOST_TASK_BYTES: i64 = 1024 * 1024 * 1024 * 1024;

#[derive(Clone, Copy)]
enum StoreKind {
    Directory,
    S3,
}

pub(crate) fn read(
    field: Field<'_>,
    agent_id: &str,
    base_dir: &Path,
    errors: &mut Errors,
) -> ContentSettings {
    let section = field.section("a table like [content]", errors);
    section.refuse_unknown(&KEYS, errors);
    let kind = section
        .field("store")
        .choice(
            &[("directory", StoreKind::Directory), ("s3", StoreKind::S3)],
            errors,
        )
        .unwrap_or(StoreKind::Directory);
    let text = |key: &str, example: &str, errors: &mut Errors| {
        section
            .field(key)
            .optional_text(&format!("a string like {example:?}"), errors)
            .map(str::to_string)
    };
    let directory = text("directory", "state/content", errors);
    let bucket = text("bucket", "baton-content", errors);
    let prefix = text("prefix", "baton/front-desk", errors);
    let region = text("region", DEFAULT_REGION, errors);
    let endpoint = text("endpoint", "http://127.0.0.1:9000", errors);
    let store = match kind {
        StoreKind::Directory => {
            for key in ["bucket", "prefix", "region", "endpoint"] {
                let field = section.field(key);
                if field.is_set() {
                    field.fail(errors, "is for store = \"s3\" only");
                }
            }
            ContentStoreSpec::Directory(match directory {
                Some(path) => base_dir.join(path),
                None => base_dir.join(".baton").join(agent_id).join("content"),
            })
        }
        StoreKind::S3 => {
            if directory.is_some() {
                section
                    .field("directory")
                    .fail(errors, "is for store = \"directory\" only");
            }
            if bucket.is_none() && !section.field("bucket").is_set() {
                section
                    .field("bucket")
                    .fail(errors, "is required with store = \"s3\"");
            }
            ContentStoreSpec::S3 {
                bucket: bucket.unwrap_or_default(),
                prefix: prefix.unwrap_or_else(|| format!("baton/{agent_id}")),
                region: region.unwrap_or_else(|| DEFAULT_REGION.to_string()),
                endpoint,
            }
        }
    };
    let retry_for = section
        .field("retry_for")
        .duration_up_to(Some((MOST_RETRY_FOR, "5 minutes")), errors)
        .unwrap_or(DEFAULT_RETRY_FOR);
    let max_part_bytes = section
        .field("max_part_bytes")
        .count_between(
            "an integer number of bytes like 5242880",
            (1024, MOST_PART_BYTES),
            " bytes",
            errors,
        )
        .unwrap_or(DEFAULT_MAX_PART_BYTES);
    let max_task_field = section.field("max_task_bytes");
    let max_task_bytes = max_task_field
        .count_between(
            "an integer number of bytes like 52428800",
            (1024, MOST_TASK_BYTES),
            " bytes",
            errors,
        )
        .map_or(DEFAULT_MAX_TASK_BYTES.max(max_part_bytes as u64), |n| {
            n as u64
        });
    if max_task_bytes < max_part_bytes as u64 {
        max_task_field.fail(
            errors,
            format!("must be at least content.max_part_bytes ({max_part_bytes})"),
        );
    }
    let media_types_field = section.field("media_types");
    let media_types = if media_types_field.is_set() {
        let types = media_types_field.strings("a list of media types like [\"image/*\"]", errors);
        for (index, media_type) in types.iter().enumerate() {
            if !media_types::is_pattern(media_type) {
                errors.push(
                    format!("{}[{index}]", media_types_field.path()),
                    format!(
                        "must be a media type like \"image/png\", a family like \"image/*\", or \"*/*\" (got {media_type:?})"
                    ),
                );
            }
        }
        types.iter().map(|t| t.to_ascii_lowercase()).collect()
    } else {
        vec!["*/*".to_string()]
    };
    ContentSettings {
        store,
        retry_for,
        max_part_bytes,
        max_task_bytes,
        media_types,
        fetch_urls: section.field("fetch_urls").boolean(errors).unwrap_or(false),
        keep_for: read_keep_for(&section.field("keep_for"), errors),
    }
}

fn read_keep_for(field: &Field<'_>, errors: &mut Errors) -> Duration {
    let Some(keep_for) = field.duration_at_least_one_second(errors) else {
        return DEFAULT_KEEP_FOR;
    };
    if keep_for < LEAST_KEEP_FOR {
        field.fail(errors, "must be at least 1h");
        return DEFAULT_KEEP_FOR;
    }
    keep_for
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    #[test]
    fn the_default_is_a_directory_beside_the_dev_server_that_takes_any_file() {
        let content = parse("").unwrap().content;
        assert_eq!(
            content.store,
            ContentStoreSpec::Directory(PathBuf::from("/srv/baton/.baton/baton/content"))
        );
        assert_eq!(content.retry_for, Duration::from_secs(60));
        assert_eq!(content.max_part_bytes, 5 * 1024 * 1024);
        assert_eq!(content.max_task_bytes, 50 * 1024 * 1024);
        assert!(
            !content.fetch_urls,
            "a URL is never called unless the operator says so"
        );
        assert_eq!(content.keep_for, Duration::from_secs(30 * 24 * 3600));
        assert!(content.accepts("application/vnd.ms-excel"));
    }

    #[test]
    fn content_is_kept_at_least_an_hour() {
        let content = parse("[content]\nkeep_for = \"2160h\"").unwrap().content;
        assert_eq!(content.keep_for, Duration::from_secs(90 * 24 * 3600));
        assert_only_error(
            "[content]\nkeep_for = \"10m\"",
            "content.keep_for",
            "must be at least 1h",
        );
    }

    #[test]
    fn a_task_may_carry_no_less_than_one_part() {
        let content = parse("[content]\nmax_task_bytes = 10485760")
            .unwrap()
            .content;
        assert_eq!(content.max_task_bytes, 10 * 1024 * 1024);
        assert_only_error(
            "[content]\nmax_part_bytes = 4096\nmax_task_bytes = 2048",
            "content.max_task_bytes",
            "must be at least content.max_part_bytes (4096)",
        );
        let bigger_parts = parse("[content]\nmax_part_bytes = 67108864")
            .unwrap()
            .content;
        assert_eq!(bigger_parts.max_task_bytes, 64 * 1024 * 1024);
    }

    #[test]
    fn a_directory_resolves_against_the_file() {
        let content = parse("[content]\ndirectory = \"state/files\"")
            .unwrap()
            .content;
        assert_eq!(
            content.store,
            ContentStoreSpec::Directory(PathBuf::from("/srv/baton/state/files"))
        );
    }

    #[test]
    fn s3_needs_a_bucket_and_fills_the_rest() {
        let content = parse("[content]\nstore = \"s3\"\nbucket = \"b\"")
            .unwrap()
            .content;
        assert_eq!(
            content.store,
            ContentStoreSpec::S3 {
                bucket: "b".into(),
                prefix: "baton/baton".into(),
                region: "us-east-1".into(),
                endpoint: None,
            }
        );
        assert_only_error(
            "[content]\nstore = \"s3\"",
            "content.bucket",
            "is required with store = \"s3\"",
        );
    }

    #[test]
    fn settings_of_the_other_store_are_refused() {
        assert_only_error(
            "[content]\nbucket = \"b\"",
            "content.bucket",
            "is for store = \"s3\" only",
        );
        assert_only_error(
            "[content]\nstore = \"s3\"\nbucket = \"b\"\ndirectory = \"d\"",
            "content.directory",
            "is for store = \"directory\" only",
        );
        assert_only_error(
            "[content]\nstore = \"ftp\"",
            "content.store",
            "must be \"directory\" or \"s3\" (got \"ftp\")",
        );
    }

    #[test]
    fn limits_are_bounded() {
        assert_only_error(
            "[content]\nmax_part_bytes = 10",
            "content.max_part_bytes",
            "must be between 1024 and 67108864 bytes (got 10)",
        );
        assert_only_error(
            "[content]\nretry_for = \"10m\"",
            "content.retry_for",
            "must be at most 5 minutes (got \"10m\")",
        );
    }

    #[test]
    fn media_types_are_checked() {
        let content = parse("[content]\nmedia_types = [\"image/*\", \"Text/CSV\"]")
            .unwrap()
            .content;
        assert!(content.accepts("text/csv"));
        assert!(!content.accepts("text/plain"));
        assert_only_error(
            "[content]\nmedia_types = [\"image\"]",
            "content.media_types[0]",
            "must be a media type like \"image/png\", a family like \"image/*\", or \"*/*\" (got \"image\")",
        );
    }
}
