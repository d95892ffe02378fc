//! The test MCP servers on the official Python `mcp` SDK (`tests/peers/mcp_server.py`): the
//! `[[mcp]]` entries that start one over stdio, and a streamable HTTP one killed on drop.

use std::path::Path;

use std::time::Duration;

use baton_config::{McpServerSpec, McpTransport};

use tokio::process::{Child, Command};

use crate::{free_port, spawn_ready, venv_program, workspace};

/// The `[[mcp]]` entry `id` that starts the test server over stdio; with `calls`, it records
/// each call in that file.
pub fn stdio_mcp_spec(id: &str, calls: Option<&Path>, call_timeout: Duration) -> McpServerSpec {
    let mut args = vec![
        workspace()
            .join("tests/peers/mcp_server.py")
            .display()
            .to_string(),
        "--transport".to_string(),
        "stdio".to_string(),
    ];
    if let Some(calls) = calls {
        args.extend(["--calls".to_string(), calls.display().to_string()]);
    }
    McpServerSpec {
        id: id.to_string(),
        transport: McpTransport::Stdio {
            command: venv_program("python"),
            args,
            directory: workspace(),
            withheld_env: Vec::new(),
        },
        tools: None,
        call_timeout,
    }
}

/// The example's own MCP server (`examples/delegation/orders_mcp.py`, standard library only).
pub fn example_orders_spec() -> McpServerSpec {
    McpServerSpec {
        id: "orders".to_string(),
        transport: McpTransport::Stdio {
            command: "python3".into(),
            args: vec!["orders_mcp.py".to_string(), "orders.json".to_string()],
            directory: workspace().join("examples/delegation"),
            withheld_env: Vec::new(),
        },
        tools: None,
        call_timeout: Duration::from_secs(10),
    }
}

/// The test server over streamable HTTP on 127.0.0.1, killed on drop.
pub struct HttpMcpServer {
    child: Child,
    pub port: u16,
    calls: Option<String>,
}

impl HttpMcpServer {
    pub async fn start(calls: Option<&Path>) -> HttpMcpServer {
        let port = free_port();
        let calls = calls.map(|path| path.display().to_string());
        let child = spawn_http(port, calls.as_deref()).await;
        HttpMcpServer { child, port, calls }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The `[[mcp]]` entry `id` for this server.
    pub fn spec(&self, id: &str, call_timeout: Duration) -> McpServerSpec {
        McpServerSpec {
            id: id.to_string(),
            transport: McpTransport::Http {
                url: self.url().parse().expect("a URL"),
                bearer: None,
            },
            tools: None,
            call_timeout,
        }
    }

    /// Kills the server and starts it again on the same port: its sessions are gone.
    pub async fn restart(&mut self) {
        self.child.kill().await.ok();
        self.child = spawn_http(self.port, self.calls.as_deref()).await;
    }
}

/// The example's own server over streamable HTTP (`orders_mcp.py --http`, standard library
/// only), as the compose file runs it; killed on drop.
pub struct ExampleOrdersOverHttp {
    _child: Child,
    port: u16,
}

impl ExampleOrdersOverHttp {
    pub async fn start() -> ExampleOrdersOverHttp {
        let port = free_port();
        let mut command = Command::new("python3");
        command
            .arg(workspace().join("examples/delegation/orders_mcp.py"))
            .args(["--http", &format!("127.0.0.1:{port}")]);
        ExampleOrdersOverHttp {
            _child: spawn_ready(command, "an MCP test server").await,
            port,
        }
    }

    /// The `[[mcp]]` entry for this server.
    pub fn spec(&self) -> McpServerSpec {
        McpServerSpec {
            transport: McpTransport::Http {
                url: format!("http://127.0.0.1:{}/mcp", self.port)
                    .parse()
                    .expect("a URL"),
                bearer: None,
            },
            ..example_orders_spec()
        }
    }
}

async fn spawn_http(port: u16, calls: Option<&str>) -> Child {
    let mut command = Command::new(venv_program("python"));
    command
        .arg(workspace().join("tests/peers/mcp_server.py"))
        .args(["--transport", "http", "--port", &port.to_string()]);
    if let Some(calls) = calls {
        command.args(["--calls", calls]);
    }
    spawn_ready(command, "an MCP test server").await
}

/// The lines of a `--calls` file: one tool name per call that reached a tool.
pub fn recorded_calls(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}
