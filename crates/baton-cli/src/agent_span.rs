//! The agent id on every line an activity logs: one process of `baton up` runs several agents'
//! workers, and a line such as "task failed" must say whose task it was.

use temporalio_sdk::interceptors::{
    ActivityInboundInterceptor, ExecuteActivityInput, ExecuteActivityOutput, Next,
};
use tracing::Instrument;

/// Runs each activity of a worker inside the span `agent{agent=<id>}`.
pub(crate) struct AgentSpan {
    pub agent_id: String,
}

impl ActivityInboundInterceptor for AgentSpan {
    fn execute_activity<'a>(
        &'a self,
        input: ExecuteActivityInput,
        next: Next<'a, ExecuteActivityInput, ExecuteActivityOutput<'a>>,
    ) -> ExecuteActivityOutput<'a> {
        let span = tracing::info_span!("agent", agent = %self.agent_id);
        Box::pin(next.run(input).instrument(span))
    }
}
