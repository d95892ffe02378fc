//! Names the commit the binary is built from, for `baton --version`: `BATON_COMMIT` when the
//! build sets it (a container build has no `.git`), else `git rev-parse`, else "unknown".

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=BATON_COMMIT");
    // A new commit moves HEAD or the branch it names. A path that does not exist would make
    // every build run this again.
    for watched in [
        "../../.git/HEAD",
        "../../.git/refs/heads",
        "../../.git/packed-refs",
    ] {
        if std::path::Path::new(watched).exists() {
            println!("cargo:rerun-if-changed={watched}");
        }
    }
    let commit = std::env::var("BATON_COMMIT")
        .ok()
        .filter(|commit| !commit.is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=BATON_COMMIT={commit}");
}

/// The commit checked out.
fn git_commit() -> Option<String> {
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|out| out.status.success())?;
    Some(String::from_utf8_lossy(&head.stdout).trim().to_string())
}
