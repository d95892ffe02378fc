//! What the bench reads: latency percentiles, process RSS and CPU time from `/proc`, and the
//! Temporal steps of a workflow counted from its history.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde::Serialize;
use temporalio_client::{Client, WorkflowFetchHistoryOptions};
use temporalio_common::UntypedWorkflow;
use temporalio_common::protos::temporal::api::enums::v1::EventType;
use temporalio_common::protos::temporal::api::history::v1::HistoryEvent;
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;

/// Latency figures of one batch, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    pub count: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub mean_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

impl Latency {
    /// Nearest-rank percentiles of `samples`; `None` when there are none.
    pub fn of(samples: &[Duration]) -> Option<Latency> {
        if samples.is_empty() {
            return None;
        }
        let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        let rank = |p: f64| {
            let index = ((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len()) - 1;
            ms[index]
        };
        Some(Latency {
            count: ms.len(),
            p50_ms: rank(0.50),
            p95_ms: rank(0.95),
            mean_ms: ms.iter().sum::<f64>() / ms.len() as f64,
            min_ms: ms[0],
            max_ms: ms[ms.len() - 1],
        })
    }
}

/// `VmRSS` of a process in MiB (`None` for a process that is gone).
pub fn rss_mib(pid: Option<u32>) -> Option<f64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_string(),
    };
    let status = std::fs::read_to_string(path).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// This process's RSS after returning the allocator's free pages to the OS (`malloc_trim`): closer
/// to the memory really in use than the raw figure, which keeps whatever glibc has not released.
#[allow(unsafe_code, reason = "a libc call, with its SAFETY comment")]
pub fn trimmed_rss_mib() -> Option<f64> {
    // SAFETY: malloc_trim only releases free memory at the top of glibc's heaps.
    unsafe { libc::malloc_trim(0) };
    rss_mib(None)
}

/// User + system CPU seconds a process has used so far.
#[allow(unsafe_code, reason = "a libc call, with its SAFETY comment")]
pub fn cpu_seconds(pid: Option<u32>) -> Option<f64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/stat"),
        None => "/proc/self/stat".to_string(),
    };
    let stat = std::fs::read_to_string(path).ok()?;
    // Fields after the command name (which may hold spaces) start at field 3 (state).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some((utime + stime) / ticks)
}

/// How long each reading of what quiet work costs lasts.
pub const CPU_WINDOW: Duration = Duration::from_secs(10);

/// CPU-seconds per second of the dev server and of this process over `window`.
pub async fn cpu_per_second(
    dev_server: Option<u32>,
    window: Duration,
) -> (Option<f64>, Option<f64>) {
    let before = (cpu_seconds(dev_server), cpu_seconds(None));
    let started = std::time::Instant::now();
    tokio::time::sleep(window).await;
    let elapsed = started.elapsed().as_secs_f64();
    let rate = |before: Option<f64>, after: Option<f64>| {
        before
            .zip(after)
            .map(|(b, a)| round((a - b) / elapsed * 1000.0) / 1000.0)
    };
    (
        rate(before.0, cpu_seconds(dev_server)),
        rate(before.1, cpu_seconds(None)),
    )
}

/// The `--dynamic-config-value` settings a running `temporal server start-dev` was given.
pub fn dynamic_config(pid: Option<u32>) -> Vec<String> {
    let Some(pid) = pid else { return Vec::new() };
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return Vec::new();
    };
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    args.windows(2)
        .filter(|pair| pair[0] == "--dynamic-config-value")
        .map(|pair| pair[1].clone())
        .collect()
}

/// The 1-minute load average, to show how busy the machine was.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The Temporal steps of one workflow run, counted from its history.
///
/// `steps` = workflow tasks + activity tasks + transfer hops the workflow asked for (starting a
/// child, signalling or cancelling another workflow). Each is a round of server work (a task
/// queue dispatch or a transfer-queue read) that costs about 50 ms on an untuned dev server.
#[derive(Debug, Clone, Serialize)]
pub struct Steps {
    pub workflow_id: String,
    pub events: usize,
    pub workflow_tasks: usize,
    pub activities: Vec<String>,
    pub children_started: usize,
    pub signals_sent: usize,
    pub signals_received: usize,
    pub cancels_requested: usize,
    pub timers: usize,
    pub updates: usize,
    pub steps: usize,
    /// First to last event, by the server's clock.
    pub duration_ms: f64,
    /// Time in workflow tasks: scheduled→started (queue) and started→completed (worker).
    pub workflow_task_queue_ms: f64,
    pub workflow_task_run_ms: f64,
    /// Time in activities: scheduled→started (queue) and started→completed (worker).
    pub activity_queue_ms: f64,
    pub activity_run_ms: f64,
    /// Every event with its offset from the first, in ms.
    pub timeline: Vec<(f64, String)>,
}

/// Fetches the history of workflow `id` (its latest run) and counts its steps.
pub async fn steps_of(client: &Client, id: &str) -> anyhow::Result<Steps> {
    let events = client
        .get_workflow_handle::<UntypedWorkflow>(id)
        .fetch_history(WorkflowFetchHistoryOptions::default())
        .into_events()
        .await?;
    Ok(count_steps(id, &events))
}

/// The steps of task `id`'s stand-in; `None` when the task started none (its agent finished the
/// sub-task within the create).
pub async fn stand_in_steps(client: &Client, id: &str) -> anyhow::Result<Option<Steps>> {
    if steps_of(client, id).await?.children_started == 0 {
        return Ok(None);
    }
    steps_of(client, &format!("{id}.1")).await.map(Some)
}

/// When the event happened, in ms since the Unix epoch (0 when the event has no time).
pub fn millis(event: &HistoryEvent) -> f64 {
    event
        .event_time
        .as_ref()
        .map(|t| t.seconds as f64 * 1e3 + f64::from(t.nanos) / 1e6)
        .unwrap_or_default()
}

fn count_steps(id: &str, events: &[HistoryEvent]) -> Steps {
    let mut kinds: BTreeMap<EventType, usize> = BTreeMap::new();
    let mut activities = Vec::new();
    let at: HashMap<i64, f64> = events.iter().map(|e| (e.event_id, millis(e))).collect();
    let gap = |from: i64, to: f64| at.get(&from).map_or(0.0, |start| (to - start).max(0.0));
    let (mut wft_queue, mut wft_run, mut act_queue, mut act_run) = (0.0, 0.0, 0.0, 0.0);
    let first = events.first().map(millis).unwrap_or_default();
    let mut timeline = Vec::with_capacity(events.len());
    for event in events {
        let kind = EventType::try_from(event.event_type).unwrap_or(EventType::Unspecified);
        *kinds.entry(kind).or_default() += 1;
        let time = millis(event);
        timeline.push((
            round(time - first),
            kind.as_str_name()
                .trim_start_matches("EVENT_TYPE_")
                .to_string(),
        ));
        match &event.attributes {
            Some(Attributes::ActivityTaskScheduledEventAttributes(a)) => activities.push(
                a.activity_type
                    .as_ref()
                    .map(|t| t.name.clone())
                    .unwrap_or_default(),
            ),
            Some(Attributes::WorkflowTaskStartedEventAttributes(a)) => {
                wft_queue += gap(a.scheduled_event_id, time);
            }
            Some(Attributes::WorkflowTaskCompletedEventAttributes(a)) => {
                wft_run += gap(a.started_event_id, time);
            }
            Some(Attributes::ActivityTaskStartedEventAttributes(a)) => {
                act_queue += gap(a.scheduled_event_id, time);
            }
            Some(Attributes::ActivityTaskCompletedEventAttributes(a)) => {
                act_run += gap(a.started_event_id, time);
            }
            _ => {}
        }
    }
    let count = |kind: EventType| kinds.get(&kind).copied().unwrap_or_default();
    let workflow_tasks = count(EventType::WorkflowTaskCompleted);
    let children_started = count(EventType::StartChildWorkflowExecutionInitiated);
    let signals_sent = count(EventType::SignalExternalWorkflowExecutionInitiated);
    let cancels_requested = count(EventType::RequestCancelExternalWorkflowExecutionInitiated);
    Steps {
        workflow_id: id.to_string(),
        events: events.len(),
        workflow_tasks,
        steps: workflow_tasks
            + activities.len()
            + children_started
            + signals_sent
            + cancels_requested,
        activities,
        children_started,
        signals_sent,
        signals_received: count(EventType::WorkflowExecutionSignaled),
        cancels_requested,
        timers: count(EventType::TimerStarted),
        updates: count(EventType::WorkflowExecutionUpdateAccepted),
        duration_ms: round(events.last().map(millis).unwrap_or_default() - first),
        workflow_task_queue_ms: round(wft_queue),
        workflow_task_run_ms: round(wft_run),
        activity_queue_ms: round(act_queue),
        activity_run_ms: round(act_run),
        timeline,
    }
}

/// The results of a batch apart: what succeeded, and each failure's reason.
pub fn split<T>(results: Vec<anyhow::Result<T>>) -> (Vec<T>, Vec<String>) {
    let mut done = Vec::new();
    let mut errors = Vec::new();
    for result in results {
        match result {
            Ok(value) => done.push(value),
            Err(error) => errors.push(format!("{error:#}")),
        }
    }
    (done, errors)
}

/// Rounds to 0.1.
pub fn round(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// A batch's wall time in seconds, rounded to the millisecond.
pub fn wall_seconds(wall: Duration) -> f64 {
    round(wall.as_secs_f64() * 100.0) / 100.0
}

/// `count` done in `wall_secs` seconds, per second, rounded to 0.01.
pub fn per_second(count: usize, wall_secs: f64) -> f64 {
    round(count as f64 / wall_secs * 10.0) / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        let latency = Latency::of(&samples).unwrap();
        assert_eq!(latency.p50_ms, 50.0);
        assert_eq!(latency.p95_ms, 95.0);
        assert_eq!(latency.min_ms, 1.0);
        assert_eq!(latency.max_ms, 100.0);
        assert!(Latency::of(&[]).is_none());
        let one = Latency::of(&[Duration::from_millis(7)]).unwrap();
        assert_eq!((one.p50_ms, one.p95_ms), (7.0, 7.0));
    }

    #[test]
    fn reads_this_process() {
        assert!(rss_mib(None).is_some_and(|mib| mib > 0.0));
        assert!(cpu_seconds(None).is_some());
    }
}
