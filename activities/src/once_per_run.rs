//! Local activities whose effect is outside Temporal (a log line, a metric) run once per
//! scheduling. Their marker keeps a replay from running them again, but when the server rejects
//! the workflow task that ran one (a sub-task's cancellation arriving as the task ends adds
//! events to its history), the marker never reaches history and the activity runs again, with
//! the same activity id in the same run. This process remembers what it has run, so the second
//! run does nothing.

use std::collections::VecDeque;
use std::sync::Mutex;

use temporalio_sdk::activities::ActivityContext;

/// Runs remembered at most; the oldest are forgotten first.
const REMEMBERED: usize = 4096;

#[derive(Default)]
pub struct OncePerRun {
    done: Mutex<VecDeque<String>>,
}

impl OncePerRun {
    /// Whether the activity of `ctx` runs for the first time in this process, remembering it.
    pub fn first(&self, ctx: &ActivityContext) -> bool {
        let info = ctx.info();
        let key = format!(
            "{}/{}",
            info.workflow_run_id.as_deref().unwrap_or_default(),
            info.activity_id
        );
        self.first_key(key)
    }

    fn first_key(&self, key: String) -> bool {
        let mut done = self
            .done
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if done.contains(&key) {
            return false;
        }
        if done.len() == REMEMBERED {
            done.pop_front();
        }
        done.push_back(key);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_an_activity_is_first_once_and_the_oldest_are_forgotten() {
        let once = OncePerRun::default();
        assert!(once.first_key("r-1/5".into()));
        assert!(!once.first_key("r-1/5".into()));
        assert!(
            once.first_key("r-1/6".into()),
            "another activity of the run"
        );
        assert!(
            once.first_key("r-2/5".into()),
            "the same activity of another run"
        );
        for n in 0..REMEMBERED {
            once.first_key(format!("filler/{n}"));
        }
        assert!(
            once.first_key("r-1/5".into()),
            "forgotten after {REMEMBERED} others"
        );
    }
}
