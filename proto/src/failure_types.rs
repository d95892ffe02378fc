//! The types of the activity failures the workflows read: an activity fails with one of these
//! (non-retryable) when asking again cannot help, and the workflow acts on the type, never on
//! the message.

/// The agent is not configured on the worker that ran the activity.
pub const AGENT_UNKNOWN: &str = "agent.unknown";
/// The agent no longer knows the task (A2A error -32001).
pub const TASK_NOT_FOUND: &str = "remote.task_not_found";
/// The model provider refused the request for good (a 400, 401, 404, …).
pub const PROVIDER_FAILED: &str = "provider.failed";
/// The MCP tool cannot be called: the worker offers no such tool, or the call failed in a way
/// that calling again cannot mend. (Arguments that are not a JSON object, and a server that
/// refuses the call, come back to the model as an `is_error` result instead.)
pub const TOOL_REFUSED: &str = "tool.refused";
/// The agent neither confirmed a cancel nor showed the task's state before the stand-in's bound
/// passed: the task may still run.
pub const CANCEL_NOT_CONFIRMED: &str = "remote.cancel_not_confirmed";
