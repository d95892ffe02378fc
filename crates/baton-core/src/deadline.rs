//! How long a delegation may run: the deadline the model asked for within the agent's own, the
//! time left of it, and the words the parent's model reads when it passed.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The delegation's deadline in seconds: what the model asked for, within the agent's
/// `deadline`, never under a second; the agent's when the model asked for none.
pub fn delegation_deadline(agent: Duration, asked: Option<u64>) -> u64 {
    let cap = agent.as_secs().max(1);
    asked.map_or(cap, |asked| asked.clamp(1, cap))
}

/// When a deadline of `secs` seconds from `now` passes, in milliseconds since the Unix epoch.
pub fn deadline_at_ms(now: SystemTime, secs: u64) -> u64 {
    unix_ms(now).saturating_add(secs.saturating_mul(1000))
}

/// The time left before `at_ms` at `now`; zero once it has passed.
pub fn time_left(at_ms: u64, now: SystemTime) -> Duration {
    Duration::from_millis(at_ms.saturating_sub(unix_ms(now)))
}

/// What the row says of a delegation that ran past its deadline of `secs` seconds.
pub fn deadline_exceeded(secs: u64) -> String {
    format!(
        "deadline exceeded: it was still running after {}, so Baton cancelled it on the agent",
        in_words(secs)
    )
}

/// The longest deadline a delegator may give a task: the longest `agents[].deadline`.
pub const MAX_TASK_DEADLINE_SECS: u64 = 720 * 3600;

/// Why a task its delegator gave `secs` seconds ended FAILED.
pub fn task_deadline_exceeded(secs: u64) -> String {
    format!(
        "deadline exceeded: the task was still running after {}, the time its delegator gave it",
        in_words(secs)
    )
}

/// The most time a task keeps back from a sub-task's deadline to answer in.
pub const MAX_ANSWER_MARGIN: Duration = Duration::from_secs(60);

/// What a task with `left` of its deadline keeps back to answer in once a sub-task ends or
/// runs out: a tenth of it, at most [`MAX_ANSWER_MARGIN`].
pub fn answer_margin(left: Duration) -> Duration {
    (left / 10).min(MAX_ANSWER_MARGIN)
}

/// A delegation's deadline, in seconds, within what is left of its task's own, if it has one,
/// less the task's [`answer_margin`]; never under a second.
pub fn within_task_deadline(asked: Option<u64>, task_left: Option<Duration>) -> Option<u64> {
    let Some(left) = task_left else {
        return asked;
    };
    let left = left.saturating_sub(answer_margin(left)).as_secs().max(1);
    Some(asked.map_or(left, |asked| asked.min(left)))
}

fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    })
}

/// `90` → `1m30s`, `86400` → `24h`.
fn in_words(secs: u64) -> String {
    let (hours, minutes, seconds) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut words = String::new();
    for (amount, unit) in [(hours, "h"), (minutes, "m"), (seconds, "s")] {
        if amount > 0 {
            words.push_str(&format!("{amount}{unit}"));
        }
    }
    if words.is_empty() { "0s".into() } else { words }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delegation_gets_no_more_than_its_task_has_left_less_the_time_to_answer() {
        assert_eq!(within_task_deadline(None, None), None);
        assert_eq!(within_task_deadline(Some(600), None), Some(600));
        let left = Some(Duration::from_secs(90));
        assert_eq!(within_task_deadline(None, left), Some(81));
        assert_eq!(within_task_deadline(Some(600), left), Some(81));
        assert_eq!(within_task_deadline(Some(30), left), Some(30));
        assert_eq!(within_task_deadline(None, Some(Duration::ZERO)), Some(1));
        let hour = Some(Duration::from_secs(3600));
        assert_eq!(
            within_task_deadline(None, hour),
            Some(3540),
            "a minute at most"
        );
        assert_eq!(
            within_task_deadline(None, Some(Duration::from_millis(1500))),
            Some(1)
        );
        assert_eq!(
            task_deadline_exceeded(90),
            "deadline exceeded: the task was still running after 1m30s, the time its delegator gave it"
        );
    }

    #[test]
    fn down_a_chain_each_hop_keeps_time_to_answer_before_its_parent_runs_out() {
        // Four hops under a root that gave the first ten minutes: each deadline ends inside the
        // one above it, by at least a second, so every hop can still answer.
        let mut left = Duration::from_secs(600);
        for _ in 0..4 {
            let below = within_task_deadline(None, Some(left)).unwrap();
            assert!(Duration::from_secs(below) < left, "{below}s under {left:?}");
            left = Duration::from_secs(below);
        }
        assert_eq!(left, Duration::from_secs(393));
    }

    #[test]
    fn the_model_may_ask_for_less_than_the_agents_deadline_never_more() {
        let day = Duration::from_secs(86_400);
        assert_eq!(delegation_deadline(day, None), 86_400);
        assert_eq!(delegation_deadline(day, Some(600)), 600);
        assert_eq!(delegation_deadline(day, Some(10 * 86_400)), 86_400);
        assert_eq!(delegation_deadline(day, Some(0)), 1);
        assert_eq!(delegation_deadline(Duration::from_millis(300), None), 1);
    }

    #[test]
    fn the_time_left_counts_down_to_zero_and_stays_there() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        let at = deadline_at_ms(now, 90);
        assert_eq!(at, 1_090_000);
        assert_eq!(time_left(at, now), Duration::from_secs(90));
        assert_eq!(
            time_left(at, now + Duration::from_secs(89)),
            Duration::from_secs(1)
        );
        assert_eq!(time_left(at, now + Duration::from_secs(90)), Duration::ZERO);
        assert_eq!(
            time_left(at, now + Duration::from_secs(900)),
            Duration::ZERO
        );
        assert_eq!(deadline_at_ms(now, u64::MAX), u64::MAX);
    }

    #[test]
    fn the_words_name_the_deadline_as_it_reads() {
        assert_eq!(in_words(90), "1m30s");
        assert_eq!(in_words(86_400), "24h");
        assert_eq!(in_words(3_661), "1h1m1s");
        assert_eq!(in_words(5), "5s");
        assert!(deadline_exceeded(3).contains("after 3s"));
    }
}
