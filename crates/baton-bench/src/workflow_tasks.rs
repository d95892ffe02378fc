//! What the workflow tasks of a bench run did, read from every history the run left on its dev
//! server: how many completed, how long each took from start to completion, and how many a
//! worker never answered (timed out) or failed. A workflow task the SDK loses shows here as a
//! timeout (docs/performance.md, "A lost workflow task, bounded to 5 s").

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;
use serde::Serialize;
use temporalio_client::{
    Client, WorkflowExecutionInfo, WorkflowFetchHistoryOptions, WorkflowListOptions,
};
use temporalio_common::protos::temporal::api::enums::v1::EventType;
use temporalio_common::protos::temporal::api::history::v1::HistoryEvent;
use temporalio_common::protos::temporal::api::history::v1::history_event::Attributes;

use crate::measure::{Latency, millis};

/// The workflow tasks of every workflow run in a namespace.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WorkflowTasks {
    /// Workflow runs read.
    pub runs: usize,
    pub completed: usize,
    /// Started and never answered by a worker: Temporal gave them to a worker again.
    pub timed_out: usize,
    pub failed: usize,
    /// From started to completed, of those that completed.
    pub run_ms: Option<Latency>,
}

/// Reads the history of every workflow run in the client's namespace.
pub async fn audit(client: &Client) -> anyhow::Result<WorkflowTasks> {
    let runs: Vec<_> = client
        .list_workflows("", WorkflowListOptions::default())
        .collect()
        .await;
    let mut tally = Tally::default();
    for run in runs {
        let run = run?;
        let handle = WorkflowExecutionInfo::builder()
            .namespace(client.options().namespace.clone())
            .workflow_id(run.id())
            .run_id(run.run_id())
            .build()
            .bind_untyped(client.clone());
        let events = handle
            .fetch_history(WorkflowFetchHistoryOptions::default())
            .into_events()
            .await?;
        tally.add(&events);
    }
    Ok(tally.finish())
}

#[derive(Default)]
struct Tally {
    runs: usize,
    took: Vec<Duration>,
    timed_out: usize,
    failed: usize,
}

impl Tally {
    /// Adds one run's history.
    fn add(&mut self, events: &[HistoryEvent]) {
        self.runs += 1;
        let started_at: HashMap<i64, f64> = events
            .iter()
            .filter(|e| e.event_type == EventType::WorkflowTaskStarted as i32)
            .map(|e| (e.event_id, millis(e)))
            .collect();
        for event in events {
            let started = match &event.attributes {
                Some(Attributes::WorkflowTaskCompletedEventAttributes(a)) => a.started_event_id,
                Some(Attributes::WorkflowTaskTimedOutEventAttributes(a)) => {
                    // A task scheduled and never started (its worker gone) is not a lost one.
                    if a.started_event_id != 0 {
                        self.timed_out += 1;
                    }
                    continue;
                }
                Some(Attributes::WorkflowTaskFailedEventAttributes(_)) => {
                    self.failed += 1;
                    continue;
                }
                _ => continue,
            };
            if let Some(start) = started_at.get(&started) {
                let took_ms = (millis(event) - start).max(0.0);
                self.took.push(Duration::from_secs_f64(took_ms / 1e3));
            }
        }
    }

    fn finish(self) -> WorkflowTasks {
        WorkflowTasks {
            runs: self.runs,
            completed: self.took.len(),
            timed_out: self.timed_out,
            failed: self.failed,
            run_ms: Latency::of(&self.took),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use temporalio_common::protos::temporal::api::history::v1::{
        WorkflowTaskCompletedEventAttributes, WorkflowTaskFailedEventAttributes,
        WorkflowTaskTimedOutEventAttributes,
    };

    fn event(event_id: i64, millis: i64, attributes: Attributes, kind: EventType) -> HistoryEvent {
        HistoryEvent {
            event_id,
            event_time: Some(
                (std::time::UNIX_EPOCH
                    + Duration::from_secs(1_000)
                    + Duration::from_millis(u64::try_from(millis).unwrap()))
                .into(),
            ),
            event_type: kind as i32,
            attributes: Some(attributes),
            ..Default::default()
        }
    }

    fn started(event_id: i64, millis: i64) -> HistoryEvent {
        event(
            event_id,
            millis,
            Attributes::WorkflowTaskStartedEventAttributes(Default::default()),
            EventType::WorkflowTaskStarted,
        )
    }

    fn completed(event_id: i64, millis: i64, started_event_id: i64) -> HistoryEvent {
        event(
            event_id,
            millis,
            Attributes::WorkflowTaskCompletedEventAttributes(
                WorkflowTaskCompletedEventAttributes {
                    started_event_id,
                    ..Default::default()
                },
            ),
            EventType::WorkflowTaskCompleted,
        )
    }

    fn timed_out(event_id: i64, millis: i64, started_event_id: i64) -> HistoryEvent {
        event(
            event_id,
            millis,
            Attributes::WorkflowTaskTimedOutEventAttributes(WorkflowTaskTimedOutEventAttributes {
                started_event_id,
                ..Default::default()
            }),
            EventType::WorkflowTaskTimedOut,
        )
    }

    #[test]
    fn each_workflow_task_is_timed_from_its_start_and_a_lost_one_is_counted() {
        let mut tally = Tally::default();
        // Started at 0 and completed at 20 ms; started at 100, lost, timed out at 5,100; started
        // again at 5,101 and completed at 5,131.
        tally.add(&[
            started(3, 0),
            completed(4, 20, 3),
            started(7, 100),
            timed_out(8, 5_100, 7),
            started(10, 5_101),
            completed(11, 5_131, 10),
        ]);
        // A task scheduled and never started (a sticky queue whose worker went away) and a
        // failed one.
        tally.add(&[
            timed_out(3, 10_000, 0),
            started(5, 10_001),
            event(
                6,
                10_002,
                Attributes::WorkflowTaskFailedEventAttributes(
                    WorkflowTaskFailedEventAttributes::default(),
                ),
                EventType::WorkflowTaskFailed,
            ),
        ]);
        let tasks = tally.finish();
        assert_eq!(
            (tasks.runs, tasks.completed, tasks.timed_out, tasks.failed),
            (2, 2, 1, 1)
        );
        let run_ms = tasks.run_ms.unwrap();
        assert_eq!((run_ms.min_ms, run_ms.max_ms), (20.0, 30.0));
    }

    #[test]
    fn a_run_with_no_workflow_task_has_no_times() {
        let mut tally = Tally::default();
        tally.add(&[]);
        assert_eq!(
            tally.finish(),
            WorkflowTasks {
                runs: 1,
                ..WorkflowTasks::default()
            }
        );
    }
}
