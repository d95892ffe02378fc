//! The A2A extensions Baton implements. The task and status extensions are tiny-harness's,
//! published as such, so a Baton and a tiny-harness agent can brief and answer each other
//! (DESIGN.md); the deadline extension is Baton's own. Both halves of A2A use them: the gateway
//! advertises them, the outbound client requests those the other side advertises.

/// The task extension: a brief (name, goal, criteria, participants) as one data part.
pub const TASK_EXTENSION: &str = "https://madarauchiha-314.github.io/tiny-harness/a2a/ext/task/v1";
/// The status extension: the sub-state of an interrupted task.
pub const STATUS_EXTENSION: &str =
    "https://madarauchiha-314.github.io/tiny-harness/a2a/ext/status/v1";

/// The deadline extension: a brief's `metadata[DEADLINE_EXTENSION] = {"seconds": N}` says how
/// long the delegator will wait for the task; the agent ends the task FAILED past it, and gives
/// its own delegations no longer than what is left.
pub const DEADLINE_EXTENSION: &str = "urn:baton:a2a:ext:deadline:v1";

/// Every extension URI Baton implements; a remote card may require only these.
pub const SUPPORTED_EXTENSIONS: &[&str] = &[TASK_EXTENSION, STATUS_EXTENSION, DEADLINE_EXTENSION];

/// The media type of a task envelope data part.
pub const ENVELOPE_MEDIA_TYPE: &str = "application/vnd.tiny-harness.event+json";
