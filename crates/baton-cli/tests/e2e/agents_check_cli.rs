//! `baton agents check` end to end: a real Python a2a-sdk agent, a refused card, and the roster
//! printed as the model will see it, with the startup logs the seeds require.

use std::process::Output;

use baton_tests::{CardServer, PythonPeer, card_server_json};
use serde_json::json;

async fn run_check(config: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baton.toml");
    std::fs::write(&path, config).unwrap();
    tokio::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(["agents", "check", "--config"])
        .arg(&path)
        .env("RUST_LOG", "info")
        .output()
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn accepted_agents_get_a_row_each_and_the_roster_is_printed() {
    let peer = PythonPeer::start(&["--name", "Echo", "--skills", "2", "--push"]).await;
    let output = run_check(&format!(
        r#"
        agents = [{{ id = "echo", url = "{}" }}, {{ id = "quiet", url = "{}", updates = "off" }}]
        [agent]
        id = "front-desk"
        instructions = "Hand each question to the agent whose card matches it."
        [prompt.extend]
        agents = "Prefer echo."
        [server]
        base_url = "http://127.0.0.1:1/"
        [card]
        name = "Front desk"
        "#,
        peer.url(),
        peer.url(),
    ))
    .await;
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stdout}\n{stderr}");

    let rows: Vec<&str> = stdout.lines().take(4).collect();
    assert!(rows[0].starts_with("ID"), "{stdout}");
    let echo = rows[1];
    assert!(
        echo.starts_with("echo") && echo.contains("Echo") && echo.contains(" 2 "),
        "{echo}"
    );
    assert!(
        echo.contains(&format!("JSONRPC 1.0 {}/rpc", peer.url())),
        "{echo}"
    );
    assert!(echo.contains("push") && echo.ends_with("fetched"), "{echo}");
    assert!(
        rows[2].starts_with("quiet") && rows[2].contains(" off "),
        "{}",
        rows[2]
    );
    assert!(
        rows[3].starts_with("self") && rows[3].ends_with("built"),
        "{}",
        rows[3]
    );

    assert!(
        stdout.contains(
            "\ninstructions (as the model sees them):\n\
             Hand each question to the agent whose card matches it.\n\
             system prompt sections extended: agents\n"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("self: `self` is not offered"), "{stdout}");
    let roster = stdout
        .split("roster (as the model sees it):\n")
        .nth(1)
        .unwrap();
    assert!(
        roster.starts_with("<untrusted source=\"agent-cards\">"),
        "{roster}"
    );
    assert!(roster.contains("- id: echo\n  name: Echo"), "{roster}");
    assert!(
        roster.contains("- id: self\n  name: Front desk"),
        "{roster}"
    );
    assert!(
        !roster.contains("127.0.0.1"),
        "the roster never shows a URL: {roster}"
    );
    assert!(
        stderr.contains("agents roster: echo, quiet, self"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_refused_card_fails_the_check_naming_the_agent_and_why() {
    let hostile = CardServer::start(|_| {
        card_server_json(
            json!({
                "name": "Vault", "description": "", "version": "1",
                "supportedInterfaces": [{"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "capabilities": {}, "skills": [],
                "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}},
                "securityRequirements": [{"schemes": {"key": {"list": []}}}]
            })
            .to_string(),
        )
    })
    .await;
    let chatty = CardServer::start(|_| {
        card_server_json(
            json!({
                "name": "Chatty", "description": "x".repeat(2000), "version": "1",
                "supportedInterfaces": [{"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "capabilities": {}, "skills": []
            })
            .to_string(),
        )
    })
    .await;
    let output = run_check(&format!(
        r#"agents = [{{ id = "vault", url = "{}", allow_other_origin = true }}, {{ id = "chatty", url = "{}", allow_other_origin = true }}]"#,
        hostile.url(),
        chatty.url()
    ))
    .await;
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    let vault = stdout.lines().find(|l| l.starts_with("vault")).unwrap();
    assert!(
        vault.ends_with("refused: a2a.security_unsatisfiable"),
        "{vault}"
    );
    assert!(
        stderr.contains("ERROR")
            && stderr.contains(
                "agent vault: its card requires one of: key: an API key in header X-Key: set agents[].auth.api_key_env"
            ),
        "{stderr}"
    );
    assert!(
        stderr.contains("vault [a2a.security_unsatisfiable]"),
        "{stderr}"
    );
    // The refused agent is not in the roster; the others are, one WARNING per cut field.
    assert!(!stdout.contains("- id: vault"), "{stdout}");
    assert!(stdout.contains("- id: chatty"), "{stdout}");
    // Without server.base_url nothing serves `self`: it is left out, and the check says why.
    assert!(stderr.contains("agents roster: chatty\n"), "{stderr}");
    assert!(
        stdout.contains("\nself: `self` is not offered to the model: a sub-task on this agent is created through its own gateway, which runs only with server.base_url set"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "\ninstructions: none (set agent.instructions to say what this agent is for)\n"
        ),
        "{stdout}"
    );
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(
        warnings[0].contains("`self` is not offered to the model"),
        "{stderr}"
    );
    assert!(
        warnings[1].contains("agent chatty: card field description truncated"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_card_name_with_terminal_escapes_and_no_end_is_printed_on_one_escaped_line() {
    let evil = CardServer::start(|_| {
        card_server_json(
            json!({
                "name": format!("\u{1b}]0;pwned\u{7}\u{1b}[2JEvil\nERROR forged line{}", "x".repeat(500_000)),
                "description": "", "version": "1",
                "supportedInterfaces": [{"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "capabilities": {}, "skills": []
            })
            .to_string(),
        )
    })
    .await;
    let output = run_check(&format!(
        r#"agents = [{{ id = "evil", url = "{}", allow_other_origin = true }}]"#,
        evil.url()
    ))
    .await;
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "no panic: {stdout}\n{stderr}"
    );
    for shown in [&stdout, &stderr] {
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown:?}"
        );
        assert!(
            !shown.lines().any(|l| l.starts_with("ERROR forged")),
            "{shown}"
        );
    }
    let row = stdout.lines().find(|l| l.starts_with("evil")).unwrap();
    assert!(row.contains("Evil\\nERROR forged"), "{row}");
    assert!(
        row.chars().count() < 300,
        "{} characters",
        row.chars().count()
    );
}

#[tokio::test]
async fn a_bad_config_is_reported_by_setting() {
    let output = run_check(r#"agents = [{ id = "self", url = "http://127.0.0.1:1" }]"#).await;
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr.contains("agents[0].id"), "{stderr}");
    assert!(stderr.contains("reserved"), "{stderr}");
}

#[tokio::test]
async fn a_command_without_config_finds_it_in_baton_config() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("desk.toml");
    std::fs::write(
        &path,
        "[agent]\nid = \"desk\"\ninstructions = \"Answer politely.\"",
    )
    .unwrap();
    let baton = |args: &[&str], config: Option<&std::path::Path>| {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_baton"));
        command.args(args).env_remove("BATON_CONFIG");
        if let Some(config) = config {
            command.env("BATON_CONFIG", config);
        }
        command.output()
    };
    let checked = baton(&["agents", "check"], Some(&path)).await.unwrap();
    let stdout = text(&checked.stdout);
    assert!(
        checked.status.success(),
        "{stdout}{}",
        text(&checked.stderr)
    );
    assert!(stdout.contains("Answer politely."), "{stdout}");

    let missing = baton(&["agents", "check"], None).await.unwrap();
    assert_eq!(missing.status.code(), Some(2), "clap's usage error");
    assert!(text(&missing.stderr).contains("--config <FILE>"));

    // `task` reads the agent's URL from the config BATON_CONFIG names.
    let listed = baton(&["task", "list"], Some(&path)).await.unwrap();
    assert!(!listed.status.success());
    assert!(
        text(&listed.stderr).contains("server.base_url is not set, so it serves no gateway"),
        "{}",
        text(&listed.stderr)
    );
    let nothing = baton(&["task", "list"], None).await.unwrap();
    assert!(
        text(&nothing.stderr).contains(
            "say which agent: --url URL, --config FILE, or BATON_CONFIG in the environment"
        ),
        "{}",
        text(&nothing.stderr)
    );
}

#[tokio::test]
async fn the_mcp_tools_are_listed_as_the_model_is_offered_them() {
    let example = baton_tests::workspace().join("examples/delegation");
    let output = run_check(&format!(
        "[[mcp]]\nid = \"orders\"\ncommand = \"python3\"\nargs = [{:?}, {:?}]\n",
        example.join("orders_mcp.py").display().to_string(),
        example.join("orders.json").display().to_string(),
    ))
    .await;
    let stdout = text(&output.stdout);
    assert!(
        output.status.success(),
        "{}\n{stdout}",
        text(&output.stderr)
    );
    assert!(
        stdout.contains(
            "MCP tools (offered beside Baton's own tools):\n  get_order (orders; read-only or idempotent: up to 3 attempts): Looks up one customer order"
        ),
        "{stdout}"
    );

    let output = run_check(&format!(
        "[[mcp]]\nid = \"orders\"\ncommand = \"python3\"\nargs = [{:?}]\ntools = [\"refund\"]\n",
        example.join("orders_mcp.py").display().to_string(),
    ))
    .await;
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(
            "error: mcp[0] (orders): the server lists no tool refund (it lists: get_order, order_csv); correct mcp[0] (orders).tools"
        ),
        "{stderr}"
    );
}

#[tokio::test]
async fn config_check_shows_each_setting_in_effect_with_its_source_and_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("desk.toml");
    std::fs::write(
        &path,
        "[agent]\nid = \"desk\"\ninstructions = \"Answer politely.\\nNever guess.\"\n\
         [model]\nbase_url = \"https://llm.example.com/v1\"\ntimeout = \"90s\"\n",
    )
    .unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(["config", "check", "--config"])
        .arg(&path)
        .env("BATON_MODEL", "gpt-from-env")
        .env("OPENAI_API_KEY", "sk-very-secret")
        .env("TEMPORAL_ADDRESS", "temporal.internal:7233")
        .env("TEMPORAL_API_KEY", "tk-very-secret")
        .env("TEMPORAL_GRPC_META_X_TENANT", "tenant-secret")
        .env("BATON_DEPLOYMENT_SECRET", "d".repeat(40))
        .output()
        .await
        .unwrap();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    let row = |setting: &str| -> Vec<String> {
        let line = stdout
            .lines()
            .find(|line| line.split_whitespace().next() == Some(setting))
            .unwrap_or_else(|| panic!("no row {setting}:\n{stdout}"));
        vec![
            line.split_whitespace().nth(1).unwrap().to_string(),
            line.split_whitespace().last().unwrap().to_string(),
        ]
    };
    assert_eq!(row("agent.id"), ["desk", "file"]);
    assert_eq!(row("temporal.mode")[0], "remote");
    assert_eq!(
        row("temporal.address"),
        ["temporal.internal:7233", "TEMPORAL_ADDRESS"]
    );
    assert_eq!(row("temporal.namespace"), ["default", "default"]);
    assert_eq!(row("temporal.api_key"), ["***", "TEMPORAL_API_KEY"]);
    assert_eq!(
        row("model.base_url"),
        ["https://llm.example.com/v1", "file"]
    );
    assert_eq!(row("model.model"), ["gpt-from-env", "BATON_MODEL"]);
    assert_eq!(row("model.timeout"), ["90s", "file"]);
    assert_eq!(row("model.retry_for"), ["300s", "default"]);
    assert_eq!(row("BATON_DEPLOYMENT_SECRET"), ["***", "environment"]);
    assert!(stdout.contains("agent.instructions"), "{stdout}");
    assert!(stdout.contains("Answer politely."), "{stdout}");
    // OPENAI_API_KEY is for OpenAI's endpoint, not this one: withheld, and said so.
    assert!(
        stdout.contains("OPENAI_API_KEY is set but not sent"),
        "{stdout}"
    );
    for secret in [
        "sk-very-secret",
        "tk-very-secret",
        "tenant-secret",
        &"d".repeat(40),
    ] {
        assert!(!stdout.contains(secret), "{secret} printed:\n{stdout}");
    }

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[agent]\nid = \"Desk\"\n").unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(["config", "check", "--config"])
        .arg(&bad)
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("agent.id: must match"),
        "{}",
        text(&output.stderr)
    );
}
