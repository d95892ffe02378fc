//! The bench's helper processes (its A2A peer, the Python baseline): started so that they die
//! with the bench (PR_SET_PDEATHSIG), read until they say where they listen, and stopped with
//! SIGTERM, then SIGKILL. The workers the benches measure die with the bench the same way.

use std::os::unix::process::CommandExt as _;
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A running helper process; killed on drop.
pub struct ChildProcess {
    child: Child,
}

impl ChildProcess {
    /// Starts `command` and waits (at most 30 s) for a stdout line starting with `ready_prefix`;
    /// returns the process and the rest of that line.
    pub async fn start(
        mut command: Command,
        what: &str,
        ready_prefix: &str,
    ) -> anyhow::Result<(ChildProcess, String)> {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        dies_with_the_bench(&mut command);
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {what}"))?;
        let stdout = child.stdout.take().context("a child's stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let rest = tokio::time::timeout(Duration::from_secs(30), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(rest) = line.strip_prefix(ready_prefix) {
                    return Some(rest.to_string());
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .with_context(|| format!("{what} did not say where it listens within 30 s"))?;
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok((ChildProcess { child }, rest))
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// SIGTERM, then SIGKILL after 5 s.
    #[allow(unsafe_code, reason = "a libc call, with its SAFETY comment")]
    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            // SAFETY: kill(2) on the id of a child we spawned and have not reaped.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        }
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            self.child.kill().await.ok();
        }
    }
}

/// Has the kernel send the process `command` starts SIGTERM when the bench dies, however it
/// dies: `kill_on_drop` covers only a bench that unwinds, not one stopped by a signal.
#[allow(unsafe_code, reason = "a libc call, with its SAFETY comment")]
pub fn dies_with_the_bench(command: &mut Command) {
    // SAFETY: prctl is async-signal-safe and touches only the child's own state between fork and
    // exec.
    unsafe {
        command.as_std_mut().pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
