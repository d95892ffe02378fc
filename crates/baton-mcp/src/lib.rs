//! Baton's MCP client, on the official Rust SDK (`rmcp`): the `[[mcp]]` servers of one worker,
//! connected when it starts, their tools listed once and fixed (they are part of the model's
//! cached prefix), and one tool call at a time, bounded by the server's `call_timeout`.
//!
//! A connection that breaks (a stdio server that exits, an HTTP server that restarts) is made
//! again on the next call; the tools stay the ones listed at start.

#![warn(missing_docs)]

mod connection;
mod offer;
mod output;

use std::collections::HashMap;
use std::time::Duration;

use baton_config::McpServerSpec;
use serde_json::{Map, Value};
use tokio::sync::Mutex;

pub use offer::{McpTool, all_tools};
pub use output::output_of;

use connection::Connection;
use offer::offered_tools;

/// How long connecting to a server (and listing its tools) may take when the worker starts.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The MCP servers of one worker and the tools they offer.
pub struct McpServers {
    servers: Vec<Server>,
    tools: Vec<McpTool>,
    /// Each offered tool's server, by index into `servers`.
    server_of: HashMap<String, usize>,
}

struct Server {
    spec: McpServerSpec,
    /// `mcp[i] (id)`, as errors name the entry.
    entry: String,
    connection: Mutex<Option<Connection>>,
}

/// What a tool answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The result as one text the model can read (see [`output_of`]).
    pub text: String,
    /// The tool reported an error of its own (MCP `isError`).
    pub is_error: bool,
    /// The images, audio and embedded resources of the result, in order: files the task keeps.
    pub files: Vec<ToolFile>,
}

/// A file a tool gave in its result, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFile {
    /// The last segment of an embedded resource's URI; none for an image or audio clip.
    pub name: Option<String>,
    /// Its media type (`application/octet-stream` when the tool gave none).
    pub media_type: String,
    /// Its bytes (a text resource's as UTF-8).
    pub bytes: Vec<u8>,
}

/// Why a call gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The worker offers no such tool.
    #[error("no MCP tool {0:?} on this worker")]
    UnknownTool(String),
    /// The server refused the request (a JSON-RPC error): calling again the same way will not help.
    #[error("{server} refused the call: {message}")]
    Refused {
        /// The `[[mcp]].id` of the server.
        server: String,
        /// The server's error message.
        message: String,
    },
    /// No answer within the server's `call_timeout`.
    #[error("{server} gave no answer within {}s ([[mcp]].call_timeout)", timeout.as_secs())]
    Timeout {
        /// The `[[mcp]].id` of the server.
        server: String,
        /// The `call_timeout` that passed.
        timeout: Duration,
    },
    /// The server could not be reached, or the connection broke during the call.
    #[error("{server} could not be reached: {message}")]
    Unavailable {
        /// The `[[mcp]].id` of the server.
        server: String,
        /// What failed.
        message: String,
    },
}

impl CallError {
    /// Whether calling again may get an answer.
    pub fn may_succeed_later(&self) -> bool {
        matches!(
            self,
            CallError::Timeout { .. } | CallError::Unavailable { .. }
        )
    }
}

impl McpServers {
    /// A worker with no MCP servers.
    pub fn none() -> McpServers {
        McpServers {
            servers: Vec::new(),
            tools: Vec::new(),
            server_of: HashMap::new(),
        }
    }

    /// Connects to every server and lists its tools. Any server that cannot be reached within
    /// [`CONNECT_TIMEOUT`], or whose tools cannot be offered, is an error naming its entry; the
    /// servers already started are stopped before it is returned, so no stdio server outlives a
    /// worker that refused to start.
    pub async fn connect(specs: &[McpServerSpec]) -> Result<McpServers, String> {
        let mut servers = McpServers::none();
        match servers.connect_each(specs).await {
            Ok(()) => Ok(servers),
            Err(error) => {
                servers.close().await;
                Err(error)
            }
        }
    }

    async fn connect_each(&mut self, specs: &[McpServerSpec]) -> Result<(), String> {
        let mut offered = Vec::new();
        for (index, spec) in specs.iter().enumerate() {
            let entry = format!("mcp[{index}] ({})", spec.id);
            let (connection, listed) =
                tokio::time::timeout(CONNECT_TIMEOUT, connection::open_and_list(spec))
                    .await
                    .map_err(|_| {
                        format!(
                            "{entry}: {} did not answer within {}s",
                            spec.transport.describe(),
                            CONNECT_TIMEOUT.as_secs()
                        )
                    })?
                    .map_err(|error| format!("{entry}: {error}"))?;
            self.servers.push(Server {
                spec: spec.clone(),
                entry: entry.clone(),
                connection: Mutex::new(Some(connection)),
            });
            let tools = offered_tools(&entry, &spec.id, listed, spec.tools.as_deref())?;
            tracing::info!(
                server = %spec.id,
                tools = ?tools.iter().map(|tool| tool.name.as_str()).collect::<Vec<_>>(),
                "MCP server connected: {}",
                spec.transport.describe()
            );
            offered.push((entry, tools));
        }
        self.tools = all_tools(offered)?;
        self.server_of = self
            .tools
            .iter()
            .map(|tool| {
                let index = specs
                    .iter()
                    .position(|spec| spec.id == tool.server)
                    .expect("every tool comes from a configured server");
                (tool.name.clone(), index)
            })
            .collect();
        Ok(())
    }

    /// The tools offered, in the file's order of servers and each server's order of tools.
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// Calls the tool `name` with `arguments`, within its server's `call_timeout`. A broken
    /// connection is made again first.
    pub async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<ToolOutput, CallError> {
        let server = self
            .server_of
            .get(name)
            .map(|&index| &self.servers[index])
            .ok_or_else(|| CallError::UnknownTool(name.to_string()))?;
        let timeout = server.spec.call_timeout;
        let call = async {
            let peer = server.peer().await?;
            connection::call(&peer, &server.spec.id, name, arguments).await
        };
        let outcome = tokio::time::timeout(timeout, call)
            .await
            .unwrap_or_else(|_| {
                Err(CallError::Timeout {
                    server: server.spec.id.clone(),
                    timeout,
                })
            });
        if matches!(outcome, Err(CallError::Unavailable { .. })) {
            // The next call connects again rather than use a connection that failed.
            *server.connection.lock().await = None;
        }
        outcome
    }

    /// Closes every connection; stdio servers are stopped.
    pub async fn close(&self) {
        for server in &self.servers {
            if let Some(connection) = server.connection.lock().await.take() {
                connection.close().await;
            }
        }
    }
}

impl Server {
    /// The connection's peer, connecting again when there is none or it broke.
    async fn peer(&self) -> Result<connection::Peer, CallError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref().filter(|c| !c.is_broken()) {
            return Ok(connection.peer());
        }
        tracing::info!(server = %self.spec.id, "connecting to the MCP server again ({})", self.entry);
        let connection =
            connection::open(&self.spec)
                .await
                .map_err(|message| CallError::Unavailable {
                    server: self.spec.id.clone(),
                    message,
                })?;
        let peer = connection.peer();
        *slot = Some(connection);
        Ok(peer)
    }
}
