//! One log line per failed task run. `report_task_failed` is a local activity, whose marker keeps
//! a replay from logging again; but when the server rejects the workflow task that ran it (a
//! sub-task's cancellation arriving as the task fails adds events to its history), the marker
//! never reaches history and the activity runs again. The runs this process has already
//! reported are remembered, so that second run says nothing.

use std::collections::VecDeque;
use std::sync::Mutex;

/// Runs remembered at most; the oldest are forgotten first.
const REMEMBERED_RUNS: usize = 4096;

#[derive(Default)]
pub struct ReportedRuns {
    runs: Mutex<VecDeque<String>>,
}

impl ReportedRuns {
    /// Whether `run` (a workflow's run id) is reported for the first time, remembering it.
    pub fn first_report(&self, run: &str) -> bool {
        let mut runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        if runs.iter().any(|seen| seen == run) {
            return false;
        }
        if runs.len() == REMEMBERED_RUNS {
            runs.pop_front();
        }
        runs.push_back(run.to_string());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_reported_once_and_the_oldest_are_forgotten() {
        let reported = ReportedRuns::default();
        assert!(reported.first_report("r-1"));
        assert!(!reported.first_report("r-1"));
        assert!(reported.first_report("r-2"));
        for n in 0..REMEMBERED_RUNS {
            reported.first_report(&format!("filler-{n}"));
        }
        assert!(
            reported.first_report("r-1"),
            "forgotten after {REMEMBERED_RUNS} others"
        );
    }
}
