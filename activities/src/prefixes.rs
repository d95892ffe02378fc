//! The static prefix of each task's model turns. A task is shown the roster as it stood on its
//! first turn for its whole life, so its prefix stays byte-identical (and cached by the model's
//! provider) when an agent joins later, and whichever worker runs a turn.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use baton_a2a::Registry;
use baton_core::system_prompt::{OperatorPrompt, static_prefix};
use baton_mcp::McpTool;

use crate::model_turn::StaticPrefix;

/// How many prefixes are kept built: one per roster tasks are running with, which is one more
/// than the agents that joined since the worker started, in practice.
const PREFIXES_KEPT: usize = 16;

/// Builds, and keeps, the static prefix of every roster this worker's tasks were shown.
pub struct Prefixes {
    agent_id: String,
    operator: OperatorPrompt,
    registry: Arc<Registry>,
    mcp_tools: Vec<McpTool>,
    built: Mutex<BTreeMap<Vec<String>, StaticPrefix>>,
}

impl Prefixes {
    /// The agents the prefixes show.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The prefixes of agent `agent_id`, with `operator`'s prompt, the agents of `registry` and
    /// the `mcp_tools` the worker listed at start.
    pub fn new(
        agent_id: &str,
        operator: OperatorPrompt,
        registry: Arc<Registry>,
        mcp_tools: &[McpTool],
    ) -> Prefixes {
        Prefixes {
            agent_id: agent_id.to_string(),
            operator,
            registry,
            mcp_tools: mcp_tools.to_vec(),
            built: Mutex::default(),
        }
    }

    /// The prefix of a turn of a task that was shown the agents `roster` on its first turn, or,
    /// on a first turn (`None`), of the roster as it stands. An agent of `roster` this worker is
    /// no longer configured for is left out; `Err` names one whose card it has not fetched yet.
    pub(crate) fn for_turn(&self, roster: Option<&[String]>) -> Result<StaticPrefix, String> {
        let ids: Vec<String> = match roster {
            Some(ids) => ids.to_vec(),
            None => self.registry.ids().into_iter().collect(),
        };
        let mut built = self
            .built
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(prefix) = built.get(&ids) {
            return Ok(prefix.clone());
        }
        let roster = self.registry.roster_of(&ids)?;
        let prefix = StaticPrefix::new(
            static_prefix(&self.agent_id, &self.operator, &roster.text),
            roster.ids,
            &self.mcp_tools,
        );
        if built.len() >= PREFIXES_KEPT {
            built.clear();
        }
        built.insert(ids, prefix.clone());
        Ok(prefix)
    }
}
