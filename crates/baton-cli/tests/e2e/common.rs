//! What every end-to-end test shares.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// The `baton` binary Cargo built for these tests.
pub fn baton() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_baton"))
}

/// The longest a test waits for what it started to settle: a task to end, a process to serve.
pub const WITHIN: Duration = Duration::from_secs(90);

/// Everything a model request carried, as one string to search.
pub fn all_text(request: &Value) -> String {
    request["messages"].to_string()
}
