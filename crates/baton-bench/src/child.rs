//! The bench's helper processes (its A2A peer, the Python baseline): started so that they die
//! with the bench (PR_SET_PDEATHSIG), read until they say where they listen, and stopped with
//! SIGTERM, then SIGKILL. The workers the benches measure die with the bench the same way.

use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use baton_cli::child_process::{Target, dies_with_parent, terminate};
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
        dies_with_parent(&mut command);
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
    pub async fn stop(mut self) {
        terminate(&mut self.child, Target::Process, Duration::from_secs(5)).await;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Whether `pid` has exited: gone, or a zombie nobody reaped yet.
    fn exited(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
    }

    /// Kills the process on drop if it still runs, so a failed test leaves nothing running.
    struct Killed(u32);

    impl Drop for Killed {
        fn drop(&mut self) {
            if exited(self.0) {
                return;
            }
            std::process::Command::new("kill")
                .args(["-KILL", &self.0.to_string()])
                .stderr(Stdio::null())
                .status()
                .ok();
        }
    }

    /// The kernel's parent-death signal follows the thread that spawned the process: a thread
    /// that exits stands in for a bench that dies without unwinding.
    #[tokio::test]
    async fn a_process_started_to_die_with_the_bench_gets_sigterm_when_its_spawner_goes() {
        let pid = std::thread::spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let mut command = Command::new("sleep");
                command
                    .arg("600")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                dies_with_parent(&mut command);
                command
                    .spawn()
                    .expect("starting sleep")
                    .id()
                    .expect("a pid")
            })
        })
        .join()
        .unwrap();
        let _cleanup = Killed(pid);
        baton_tests::wait::poll_until(
            "the sleep to get SIGTERM",
            Duration::from_secs(10),
            || async { exited(pid).then_some(()) },
        )
        .await;
    }
}
