//! One connection to one server, over its stdio or streamable HTTP, on `rmcp`.

use std::process::Stdio;
use std::time::Duration;

use baton_config::{McpServerSpec, McpTransport};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value};

use crate::offer::ListedTool;
use crate::output::output_of;
use crate::{CallError, ToolOutput};

pub(crate) type Peer = rmcp::Peer<RoleClient>;

/// How long the TCP connect to an HTTP server may take.
const HTTP_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
}

impl Connection {
    pub(crate) fn peer(&self) -> Peer {
        self.service.peer().clone()
    }

    /// The server went away: a stdio server exited, or the session ended.
    pub(crate) fn is_broken(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    pub(crate) async fn close(self) {
        self.service.cancel().await.ok();
    }
}

/// Connects and initialises a session.
pub(crate) async fn open(spec: &McpServerSpec) -> Result<Connection, String> {
    let service = match &spec.transport {
        McpTransport::Stdio {
            command,
            args,
            directory,
            withheld_env,
        } => {
            let mut program = tokio::process::Command::new(command);
            program.args(args).current_dir(directory);
            for variable in withheld_env {
                program.env_remove(variable);
            }
            let (transport, _) = TokioChildProcess::builder(program)
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|error| format!("cannot start {}: {error}", spec.transport.describe()))?;
            client_config().serve(transport).await
        }
        McpTransport::Http { url, bearer } => {
            // No redirects: the bearer token goes to the URL the operator wrote, nowhere else.
            let client = reqwest::Client::builder()
                .connect_timeout(HTTP_CONNECT_TIMEOUT)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|error| format!("cannot build an HTTP client: {error}"))?;
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            if let Some(bearer) = bearer {
                config = config.auth_header(bearer.secret.expose());
            }
            let transport = StreamableHttpClientTransport::with_client(client, config);
            client_config().serve(transport).await
        }
    };
    let service = service.map_err(|error| {
        format!(
            "{} did not start an MCP session: {error}",
            spec.transport.describe()
        )
    })?;
    Ok(Connection { service })
}

/// Connects, then lists every tool of the server (all pages).
pub(crate) async fn open_and_list(
    spec: &McpServerSpec,
) -> Result<(Connection, Vec<ListedTool>), String> {
    let connection = open(spec).await?;
    let tools = match connection.service.list_all_tools().await {
        Ok(tools) => tools,
        Err(error) => {
            connection.close().await;
            return Err(format!("could not list its tools: {error}"));
        }
    };
    let listed = tools
        .into_iter()
        .map(|tool| {
            let hints = tool.annotations.clone().unwrap_or_default();
            ListedTool {
                name: tool.name.to_string(),
                description: tool.description.as_deref().unwrap_or_default().to_string(),
                input_schema: Value::Object((*tool.input_schema).clone()),
                read_only: hints.read_only_hint == Some(true),
                idempotent: hints.idempotent_hint == Some(true),
            }
        })
        .collect();
    Ok((connection, listed))
}

/// One `tools/call`.
pub(crate) async fn call(
    peer: &Peer,
    server: &str,
    name: &str,
    arguments: Map<String, Value>,
) -> Result<ToolOutput, CallError> {
    let mut params = CallToolRequestParams::new(name.to_string());
    params.arguments = Some(arguments);
    match peer.call_tool(params).await {
        Ok(result) => {
            let content: Vec<Value> = result
                .content
                .iter()
                .filter_map(|block| serde_json::to_value(block).ok())
                .collect();
            Ok(output_of(
                &content,
                result.structured_content.as_ref(),
                result.is_error == Some(true),
            ))
        }
        Err(ServiceError::McpError(error)) => Err(CallError::Refused {
            server: server.to_string(),
            message: error.message.to_string(),
        }),
        Err(error) => Err(CallError::Unavailable {
            server: server.to_string(),
            message: error.to_string(),
        }),
    }
}

/// Who Baton says it is, on the protocol version every current server speaks.
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("baton", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::V_2025_06_18)
}
