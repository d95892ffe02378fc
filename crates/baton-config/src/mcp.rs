//! `[[mcp]]`: the MCP servers whose tools the model is offered beside `spawn_subtask`. A server
//! is a program Baton starts and speaks to over its stdin and stdout, or an endpoint it reaches
//! over streamable HTTP.

use std::path::{Path, PathBuf};
use std::time::Duration;

use url::Url;

use crate::agent_auth::{EnvSecret, read_secret};
use crate::error::Errors;
use crate::ids::required_remote_agent_id;
use crate::urls::base_url;
use crate::walk::{Field, Section, UniqueIds};

/// One `[[mcp]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    /// Names the server in logs, errors and the Web UI's activity summaries.
    pub id: String,
    /// How the worker reaches the server.
    pub transport: McpTransport,
    /// When given, only these of the server's tools are offered, in the server's order.
    pub tools: Option<Vec<String>>,
    /// How long one tool call may take before it fails with a timeout.
    pub call_timeout: Duration,
}

/// How the worker reaches an MCP server: `command` (stdio) or `url` (streamable HTTP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A program started by the worker, speaking MCP on its stdin and stdout. It runs in the
    /// settings file's directory, with the worker's environment less `withheld_env`: the
    /// variables that hold Baton's own secrets.
    Stdio {
        /// The program: a bare name, looked up on `PATH` when it starts, or a path (a relative
        /// one already joined to the settings file's directory).
        command: PathBuf,
        /// The program's arguments.
        args: Vec<String>,
        /// Where the program runs: the settings file's directory.
        directory: PathBuf,
        /// The environment variables the program does not inherit.
        withheld_env: Vec<String>,
    },
    /// A streamable HTTP endpoint, with an optional bearer token from the environment.
    Http {
        /// The endpoint.
        url: Url,
        /// Sent as `Authorization: Bearer`, from the variable `bearer_env` names.
        bearer: Option<EnvSecret>,
    },
}

impl McpTransport {
    /// What the transport reaches, for messages: the command line or the URL.
    pub fn describe(&self) -> String {
        match self {
            McpTransport::Stdio { command, args, .. } => {
                std::iter::once(command.display().to_string())
                    .chain(args.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            McpTransport::Http { url, .. } => url.to_string(),
        }
    }
}

const KEYS: [&str; 7] = [
    "id",
    "command",
    "args",
    "url",
    "bearer_env",
    "tools",
    "call_timeout",
];
/// How long a tool call may take unless `call_timeout` says.
pub const DEFAULT_MCP_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest `call_timeout`: the engine's bound on a tool call is a little longer.
pub const MAX_MCP_CALL_TIMEOUT: Duration = Duration::from_secs(600);

pub(crate) fn read(
    field: Field<'_>,
    base_dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> Vec<McpServerSpec> {
    let mut ids = UniqueIds::default();
    field
        .tables(
            "an array of tables like [[mcp]] with id and command (or url)",
            "a table like { id = \"orders\", command = \"orders-mcp\" }",
            errors,
        )
        .iter()
        .filter_map(|section| read_one(section, base_dir, env, &mut ids, errors))
        .collect()
}

fn read_one(
    section: &Section<'_>,
    base_dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    ids: &mut UniqueIds,
    errors: &mut Errors,
) -> Option<McpServerSpec> {
    section.refuse_unknown_explained(
        &KEYS,
        |key| {
            (key == "env" || key == "bearer").then(|| {
                "not allowed: a stdio server inherits the worker's environment, and an HTTP \
                 server's token is read from the variable named in bearer_env"
                    .to_string()
            })
        },
        errors,
    );
    let id_field = section.field("id");
    let id = required_remote_agent_id(&id_field, "a string like \"orders\"", errors);
    if let Some(id) = id {
        ids.check(id, section.path(), &id_field, errors);
    }
    let transport = read_transport(section, base_dir, env, errors);
    let tools_field = section.field("tools");
    let tools = tools_field
        .is_set()
        .then(|| tools_field.strings("a list of tool names like [\"get_order\"]", errors));
    if tools.as_ref().is_some_and(Vec::is_empty) {
        tools_field.fail(
            errors,
            "must name at least one tool; leave it out to offer all of the server's tools",
        );
    }
    let call_timeout = section
        .field("call_timeout")
        .duration_up_to(Some((MAX_MCP_CALL_TIMEOUT, "10 minutes")), errors);
    Some(McpServerSpec {
        id: id?.to_owned(),
        transport: transport?,
        tools,
        call_timeout: call_timeout.unwrap_or(DEFAULT_MCP_CALL_TIMEOUT),
    })
}

fn read_transport(
    section: &Section<'_>,
    base_dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> Option<McpTransport> {
    let command = section.field("command");
    let url = section.field("url");
    match (command.is_set(), url.is_set()) {
        (true, false) => {
            let bearer = section.field("bearer_env");
            if bearer.is_set() {
                bearer.fail(errors, "belongs to an HTTP server (url), not a command");
            }
            let program = command.required_text("a program like \"orders-mcp\"", errors)?;
            let args = section
                .field("args")
                .strings("a list of arguments like [\"--read-only\"]", errors);
            Some(McpTransport::Stdio {
                command: program_path(program, base_dir),
                args,
                directory: base_dir.to_path_buf(),
                withheld_env: Vec::new(),
            })
        }
        (false, true) => {
            let args = section.field("args");
            if args.is_set() {
                args.fail(errors, "belongs to a command, not an HTTP server (url)");
            }
            let url = base_url(&url, "https://orders.example.com/mcp", errors)?;
            let bearer_field = section.field("bearer_env");
            let bearer = if bearer_field.is_set() {
                Some(read_secret(&bearer_field, env, errors)?)
            } else {
                None
            };
            Some(McpTransport::Http { url, bearer })
        }
        (true, true) => {
            url.fail(
                errors,
                "give command (a program speaking MCP on stdio) or url (streamable HTTP), not both",
            );
            None
        }
        (false, false) => {
            section.field("command").fail(
                errors,
                "required: command (a program speaking MCP on stdio) or url (streamable HTTP)",
            );
            None
        }
    }
}

/// Gives every stdio server the list of variables it must not inherit: `secret_variables`, the
/// ones that hold Baton's own secrets. The rest of the settings name them, so this runs last.
pub(crate) fn withhold_secrets(servers: &mut [McpServerSpec], secret_variables: &[String]) {
    for server in servers {
        if let McpTransport::Stdio { withheld_env, .. } = &mut server.transport {
            *withheld_env = secret_variables.to_vec();
        }
    }
}

/// A program named with a path resolves against the settings file's directory; a bare name is
/// looked up on PATH when the worker starts it.
fn program_path(program: &str, base_dir: &Path) -> PathBuf {
    let path = Path::new(program);
    if path.components().count() > 1 && path.is_relative() {
        base_dir.join(path)
    } else {
        path.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;
    use crate::test_support::*;

    fn server(body: &str) -> McpServerSpec {
        let mut servers = parse(&format!("[[mcp]]\nid = \"orders\"\n{body}"))
            .unwrap()
            .mcp;
        assert_eq!(servers.len(), 1);
        servers.remove(0)
    }

    #[test]
    fn no_servers_by_default() {
        assert!(parse("").unwrap().mcp.is_empty());
    }

    #[test]
    fn a_stdio_server_runs_in_the_settings_directory() {
        let spec = server("command = \"python3\"\nargs = [\"orders_mcp.py\", \"orders.json\"]");
        assert_eq!(
            spec.transport,
            McpTransport::Stdio {
                command: PathBuf::from("python3"),
                args: vec!["orders_mcp.py".into(), "orders.json".into()],
                directory: PathBuf::from(BASE_DIR),
                withheld_env: vec![
                    "BATON_DEPLOYMENT_SECRET".into(),
                    "BATON_MODEL_API_KEY".into(),
                    "OPENAI_API_KEY".into(),
                    "TEMPORAL_API_KEY".into(),
                ],
            }
        );
        assert_eq!(spec.tools, None);
        assert_eq!(spec.call_timeout, DEFAULT_MCP_CALL_TIMEOUT);
        assert_eq!(
            spec.transport.describe(),
            "python3 orders_mcp.py orders.json"
        );
    }

    #[test]
    fn a_relative_program_path_resolves_against_the_settings_directory() {
        let spec = server("command = \"bin/orders-mcp\"");
        let McpTransport::Stdio { command, .. } = spec.transport else {
            panic!("stdio expected");
        };
        assert_eq!(command, PathBuf::from(BASE_DIR).join("bin/orders-mcp"));
        let spec = server("command = \"/usr/bin/orders-mcp\"");
        let McpTransport::Stdio { command, .. } = spec.transport else {
            panic!("stdio expected");
        };
        assert_eq!(command, PathBuf::from("/usr/bin/orders-mcp"));
    }

    #[test]
    fn an_http_server_takes_its_token_from_the_environment() {
        let text = "[[mcp]]\nid = \"orders\"\nurl = \"https://orders.example.com/mcp\"\nbearer_env = \"ORDERS_TOKEN\"";
        let spec = parse_with_env(text, &[("ORDERS_TOKEN", "s3cret")])
            .unwrap()
            .mcp
            .remove(0);
        let McpTransport::Http { url, bearer } = spec.transport else {
            panic!("http expected");
        };
        assert_eq!(url.as_str(), "https://orders.example.com/mcp");
        let bearer = bearer.expect("a bearer token");
        assert_eq!(bearer.variable, "ORDERS_TOKEN");
        assert_eq!(bearer.secret.expose(), "s3cret");
        assert_only_error(text, "mcp[0].bearer_env", "ORDERS_TOKEN is not set");
    }

    #[test]
    fn a_stdio_server_inherits_none_of_baton_s_secrets() {
        let text = "[[agents]]\nid = \"vault\"\nurl = \"https://vault.example.com\"\nauth = { bearer_env = \"VAULT_TOKEN\" }\n\
                    [[server.auth.tokens]]\nparticipant = \"alice\"\nsecret_env = \"ALICE_TOKEN\"\n\
                    [[mcp]]\nid = \"policies\"\nurl = \"https://p.example.com/mcp\"\nbearer_env = \"POLICIES_TOKEN\"\n\
                    [[mcp]]\nid = \"orders\"\ncommand = \"orders-mcp\"";
        let settings = parse_with_env(
            text,
            &[
                ("VAULT_TOKEN", "v"),
                ("ALICE_TOKEN", "a-token-of-sixteen-chars"),
                ("POLICIES_TOKEN", "p"),
            ],
        )
        .unwrap();
        let McpTransport::Stdio { withheld_env, .. } = &settings.mcp[1].transport else {
            panic!("stdio expected");
        };
        for variable in [
            "BATON_DEPLOYMENT_SECRET",
            "BATON_MODEL_API_KEY",
            "OPENAI_API_KEY",
            "TEMPORAL_API_KEY",
            "VAULT_TOKEN",
            "ALICE_TOKEN",
            "POLICIES_TOKEN",
        ] {
            assert!(
                withheld_env.iter().any(|v| v == variable),
                "{variable}: {withheld_env:?}"
            );
        }
    }

    #[test]
    fn tools_and_call_timeout_are_read() {
        let spec =
            server("command = \"orders-mcp\"\ntools = [\"get_order\"]\ncall_timeout = \"15s\"");
        assert_eq!(spec.tools, Some(vec!["get_order".to_string()]));
        assert_eq!(spec.call_timeout, Duration::from_secs(15));
    }

    #[test]
    fn a_server_needs_exactly_one_transport() {
        assert_only_error(
            "[[mcp]]\nid = \"orders\"",
            "mcp[0].command",
            "required: command (a program speaking MCP on stdio) or url (streamable HTTP)",
        );
        assert_only_error(
            "[[mcp]]\nid = \"orders\"\ncommand = \"x\"\nurl = \"https://o.example.com/mcp\"",
            "mcp[0].url",
            "give command (a program speaking MCP on stdio) or url (streamable HTTP), not both",
        );
    }

    #[test]
    fn settings_of_the_other_transport_are_refused() {
        assert_only_error(
            "[[mcp]]\nid = \"orders\"\ncommand = \"x\"\nbearer_env = \"T\"",
            "mcp[0].bearer_env",
            "belongs to an HTTP server (url), not a command",
        );
        assert_only_error(
            "[[mcp]]\nid = \"orders\"\nurl = \"https://o.example.com/mcp\"\nargs = [\"a\"]",
            "mcp[0].args",
            "belongs to a command, not an HTTP server (url)",
        );
    }

    #[test]
    fn bad_entries_name_what_to_change() {
        assert_only_error(
            "[[mcp]]\nid = \"orders\"\ncommand = \"x\"\nenv = { A = \"b\" }",
            "mcp[0].env",
            "not allowed: a stdio server inherits the worker's environment, and an HTTP server's token is read from the variable named in bearer_env",
        );
        assert_only_error(
            "[[mcp]]\nid = \"orders\"\ncommand = \"x\"\ntools = []",
            "mcp[0].tools",
            "must name at least one tool; leave it out to offer all of the server's tools",
        );
        assert_only_error(
            "[[mcp]]\nid = \"orders\"\ncommand = \"x\"\ncall_timeout = \"1h\"",
            "mcp[0].call_timeout",
            "must be at most 10 minutes (got \"1h\")",
        );
        assert_only_error(
            "[[mcp]]\nid = \"my orders\"\ncommand = \"x\"",
            "mcp[0].id",
            "must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$: letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63 characters (got \"my orders\")",
        );
        assert_only_error(
            "[[mcp]]\nid = \"orders\"\ncommand = \"x\"\n[[mcp]]\nid = \"orders\"\ncommand = \"y\"",
            "mcp[1].id",
            "duplicate id \"orders\" (also mcp[0])",
        );
        assert_only_error(
            "[[mcp]]\nid = \"orders\"\nurl = \"ftp://o.example.com\"",
            "mcp[0].url",
            "must be an absolute http or https URL like \"https://orders.example.com/mcp\" (got \"ftp://o.example.com\")",
        );
    }
}
