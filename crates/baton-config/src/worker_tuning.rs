//! The worker keys of `[temporal]` (`workflow_slots`, `activity_pollers`, `drain_grace`, …): how a
//! worker polls, how much it runs at once and how long it drains.

use std::time::Duration;

use crate::error::Errors;
use crate::walk::{Field, Section};

/// How a worker on the task queue polls and how much it runs at once, and how long it drains.
/// Unset slots and pollers keep the Temporal SDK's defaults (100 slots of each kind; pollers
/// that the server may autoscale).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerTuning {
    /// Workflow tasks one worker runs at once.
    pub workflow_slots: Option<usize>,
    /// Activities one worker runs at once: model turns, delegations, tool calls.
    pub activity_slots: Option<usize>,
    /// Concurrent polls for workflow tasks; at least 2, since the worker polls its sticky
    /// queue as well as the task queue.
    pub workflow_pollers: Option<usize>,
    /// Concurrent polls for activity tasks.
    pub activity_pollers: Option<usize>,
    /// How long running activities may take to finish after SIGTERM before they are
    /// cancelled. A pod's termination grace period must be longer.
    pub drain_grace: Duration,
    /// The Worker Deployment this worker belongs to (`temporal.deployment`): set, it polls with
    /// Worker Deployment Versioning, each task pinned to the version that started it. None
    /// polls unversioned.
    pub deployment: Option<String>,
    /// Its version's build id (`temporal.build_id`); None takes the binary's own.
    pub build_id: Option<String>,
}

pub(crate) const KEYS: [&str; 7] = [
    "workflow_slots",
    "activity_slots",
    "workflow_pollers",
    "activity_pollers",
    "drain_grace",
    "deployment",
    "build_id",
];
const MAX_SLOTS: i64 = 10_000;
const MAX_POLLERS: i64 = 100;
const DEFAULT_DRAIN_GRACE: Duration = Duration::from_secs(10);
const MAX_DRAIN_GRACE: Duration = Duration::from_secs(3600);

pub(crate) fn read(section: &Section<'_>, errors: &mut Errors) -> WorkerTuning {
    let bounded = |key: &str, least: i64, most: i64, errors: &mut Errors| {
        read_bounded(&section.field(key), least, most, errors)
    };
    WorkerTuning {
        workflow_slots: bounded("workflow_slots", 1, MAX_SLOTS, errors),
        activity_slots: bounded("activity_slots", 1, MAX_SLOTS, errors),
        workflow_pollers: bounded("workflow_pollers", 2, MAX_POLLERS, errors),
        activity_pollers: bounded("activity_pollers", 1, MAX_POLLERS, errors),
        drain_grace: section
            .field("drain_grace")
            .duration_up_to(Some((MAX_DRAIN_GRACE, "1 hour")), errors)
            .unwrap_or(DEFAULT_DRAIN_GRACE),
        deployment: versioning_name(&section.field("deployment"), Naming::Deployment, errors),
        build_id: versioning_name(&section.field("build_id"), Naming::BuildId, errors),
    }
}

/// Which name of a Worker Deployment Version.
#[derive(Clone, Copy, PartialEq)]
enum Naming {
    Deployment,
    BuildId,
}

/// A deployment name or build id: printable ASCII without spaces, at most 255 bytes; a
/// deployment name without `.` either, since Temporal names the version `<deployment>.<build>`.
fn versioning_name(field: &Field<'_>, naming: Naming, errors: &mut Errors) -> Option<String> {
    let (expected, rule) = match naming {
        Naming::Deployment => ("a name like \"front-desk\"", "printable, no spaces or dots"),
        Naming::BuildId => ("a build id like \"0.4.0+3f2a9c1\"", "printable, no spaces"),
    };
    let name = field.optional_text(expected, errors)?;
    let fits = name.len() <= 255
        && name
            .bytes()
            .all(|b| b.is_ascii_graphic() && (naming == Naming::BuildId || b != b'.'));
    if fits {
        Some(name.to_string())
    } else {
        field.fail(
            errors,
            format!("must be {expected}: {rule}, at most 255 bytes (got {name:?})"),
        );
        None
    }
}

fn read_bounded(field: &Field<'_>, least: i64, most: i64, errors: &mut Errors) -> Option<usize> {
    let expected = format!("an integer like {}", least.max(10));
    field.count_between(&expected, (least, most), "", errors)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::test_support::*;

    #[test]
    fn defaults_leave_the_sdk_in_charge_and_drain_for_ten_seconds() {
        let tuning = parse("").unwrap().temporal.worker;
        assert_eq!(tuning.workflow_slots, None);
        assert_eq!(tuning.activity_slots, None);
        assert_eq!(tuning.workflow_pollers, None);
        assert_eq!(tuning.activity_pollers, None);
        assert_eq!(tuning.drain_grace, Duration::from_secs(10));
    }

    #[test]
    fn every_key_is_read() {
        let tuning = parse(
            "[temporal]\nworkflow_slots = 20\nactivity_slots = 300\nworkflow_pollers = 2\n\
             activity_pollers = 8\ndrain_grace = \"45s\"",
        )
        .unwrap()
        .temporal
        .worker;
        assert_eq!(tuning.workflow_slots, Some(20));
        assert_eq!(tuning.activity_slots, Some(300));
        assert_eq!(tuning.workflow_pollers, Some(2));
        assert_eq!(tuning.activity_pollers, Some(8));
        assert_eq!(tuning.drain_grace, Duration::from_secs(45));
    }

    #[test]
    fn bounds_are_enforced() {
        for (text, setting, message) in [
            (
                "workflow_slots = 0",
                "temporal.workflow_slots",
                "must be between 1 and 10000 (got 0)",
            ),
            (
                "activity_slots = 10001",
                "temporal.activity_slots",
                "must be between 1 and 10000 (got 10001)",
            ),
            (
                "workflow_pollers = 1",
                "temporal.workflow_pollers",
                "must be between 2 and 100 (got 1)",
            ),
            (
                "activity_pollers = 101",
                "temporal.activity_pollers",
                "must be between 1 and 100 (got 101)",
            ),
            (
                "activity_slots = \"many\"",
                "temporal.activity_slots",
                "must be an integer like 10 (got a string)",
            ),
            (
                "drain_grace = \"500ms\"",
                "temporal.drain_grace",
                "must be at least 1 second (got \"500ms\")",
            ),
            (
                "drain_grace = \"2h\"",
                "temporal.drain_grace",
                "must be at most 1 hour (got \"2h\")",
            ),
        ] {
            assert_only_error(&format!("[temporal]\n{text}"), setting, message);
        }
    }

    #[test]
    fn a_deployment_and_a_build_id_are_read_and_bad_names_refused() {
        let tuning = parse("[temporal]\ndeployment = \"front-desk\"\nbuild_id = \"0.4.0+3f2a9c1\"")
            .unwrap()
            .temporal
            .worker;
        assert_eq!(
            (tuning.deployment.as_deref(), tuning.build_id.as_deref()),
            (Some("front-desk"), Some("0.4.0+3f2a9c1"))
        );
        let unset = parse("").unwrap().temporal.worker;
        assert_eq!((unset.deployment, unset.build_id), (None, None));
        assert_only_error(
            "[temporal]\ndeployment = \"front.desk\"",
            "temporal.deployment",
            "must be a name like \"front-desk\": printable, no spaces or dots, at most 255 bytes (got \"front.desk\")",
        );
        assert_only_error(
            "[temporal]\nbuild_id = \"v 2\"",
            "temporal.build_id",
            "must be a build id like \"0.4.0+3f2a9c1\": printable, no spaces, at most 255 bytes (got \"v 2\")",
        );
    }
}
