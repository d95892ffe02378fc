//! The processes Baton starts (the embedded Temporal server), and those the benches and the tests
//! start (workers, peers, the Python baseline): each dies with its parent, however the parent
//! dies, and is stopped with SIGTERM, then SIGKILL once its grace has passed.

use std::process::ExitStatus;
use std::time::Duration;

use tokio::process::{Child, Command};

/// Has the kernel send the process `command` starts SIGTERM when this process dies, however it
/// dies: `kill_on_drop` covers only a parent that unwinds, not one stopped by a signal. Linux
/// only (`PR_SET_PDEATHSIG`); elsewhere, a development build, a child outlives a parent killed
/// by a signal.
#[cfg(target_os = "linux")]
#[allow(unsafe_code, reason = "a libc call, with its SAFETY comment")]
pub fn dies_with_parent(command: &mut Command) {
    // SAFETY: prctl is async-signal-safe and touches only the child's own state between fork and
    // exec.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Elsewhere than Linux no call makes a child die with its parent.
#[cfg(not(target_os = "linux"))]
pub fn dies_with_parent(_command: &mut Command) {}

/// Whom a stop signals: the child alone, or the process group it leads (a child started with
/// `process_group(0)`, whose own children must stop with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The child alone.
    Process,
    /// The process group the child leads.
    Group,
}

/// SIGTERM to `child` (or its group), then SIGKILL once `grace` has passed. Returns how it
/// exited when it did within the grace, `None` when it had to be killed (or was reaped
/// already).
pub async fn terminate(child: &mut Child, target: Target, grace: Duration) -> Option<ExitStatus> {
    let pid = child.id()?;
    signal(pid, target, libc::SIGTERM);
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(status) => status.ok(),
        Err(_) => {
            signal(pid, target, libc::SIGKILL);
            child.wait().await.ok();
            None
        }
    }
}

/// Sends `signal` to `pid`, or to the process group it leads.
#[allow(unsafe_code, reason = "a libc call, with its SAFETY comment")]
pub fn signal(pid: u32, target: Target, signal: libc::c_int) {
    let pid = pid as libc::pid_t;
    let to = match target {
        Target::Process => pid,
        Target::Group => -pid,
    };
    // SAFETY: kill(2) on a child we spawned and have not reaped (or the group it leads).
    unsafe { libc::kill(to, signal) };
}

#[cfg(test)]
mod tests {
    use std::process::Stdio;

    use tokio::io::{AsyncBufReadExt, BufReader};

    use super::*;

    /// A shell that runs `trap` and then loops; returned once it says the trap is set.
    async fn looping_shell(trap: &str) -> Child {
        let mut command = Command::new("sh");
        command
            .args([
                "-c",
                &format!("{trap}; echo trapped; while :; do sleep 0.05; done"),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("sh runs");
        let stdout = child.stdout.take().expect("piped");
        let line = BufReader::new(stdout).lines().next_line().await;
        assert_eq!(line.expect("sh writes").as_deref(), Some("trapped"));
        child
    }

    #[tokio::test]
    async fn a_child_that_stops_on_sigterm_is_let_go_with_its_status() {
        let mut child = looping_shell("trap 'exit 3' TERM").await;
        let status = terminate(&mut child, Target::Process, Duration::from_secs(10)).await;
        assert_eq!(status.and_then(|s| s.code()), Some(3));
    }

    #[tokio::test]
    async fn a_child_that_ignores_sigterm_is_killed_once_its_grace_has_passed() {
        let mut child = looping_shell("trap '' TERM").await;
        let status = terminate(&mut child, Target::Process, Duration::from_millis(300)).await;
        assert_eq!(status, None);
        assert!(child.try_wait().expect("reaped").is_some(), "killed");
    }
}
