//! Baton's MCP client against real servers: the official Python `mcp` SDK over stdio and over
//! streamable HTTP, and the delegation example's standard-library server. A tool that fails, one
//! that hangs, a server that restarts, and configurations that cannot be honoured.

use std::time::Duration;

use baton_mcp::{CallError, McpServers};
use baton_tests::mcp_server::{
    ExampleOrdersOverHttp, HttpMcpServer, example_orders_spec, recorded_calls, stdio_mcp_spec,
};
use serde_json::{Map, Value, json};

fn arguments(value: Value) -> Map<String, Value> {
    value.as_object().expect("an object").clone()
}

fn tool_names(servers: &McpServers) -> Vec<(&str, bool)> {
    servers
        .tools()
        .iter()
        .map(|tool| (tool.name.as_str(), tool.retry_safe))
        .collect()
}

/// What every transport must do with the test server's tools.
async fn the_tools_answer_fail_and_time_out(servers: &McpServers) {
    assert_eq!(
        tool_names(servers),
        [
            ("get_order", true),
            ("refund", false),
            ("cancel_order", false),
            ("slow_lookup", true),
            ("big", true),
            ("shout", true),
            ("order_files", true)
        ]
    );
    let found = servers
        .call("get_order", arguments(json!({"order": "1042"})))
        .await
        .expect("an answer");
    assert!(!found.is_error);
    assert_eq!(
        serde_json::from_str::<Value>(&found.text).unwrap()["status"],
        "shipped on 2026-11-20"
    );
    let missing = servers
        .call("get_order", arguments(json!({"order": "9999"})))
        .await
        .expect("an answer");
    assert!(missing.is_error);
    assert!(missing.text.contains("no order 9999"), "{}", missing.text);
    let failed = servers
        .call("refund", arguments(json!({"order": "1042"})))
        .await
        .expect("an answer");
    assert!(failed.is_error);
    assert!(
        failed.text.contains("the refund service is down"),
        "{}",
        failed.text
    );
    let hung = servers
        .call("slow_lookup", arguments(json!({"order": "1042"})))
        .await
        .expect_err("no answer in time");
    assert!(matches!(hung, CallError::Timeout { .. }), "{hung:?}");
    assert!(hung.may_succeed_later());
    // The server still answers after a call that hung.
    let shouted = servers
        .call("shout", arguments(json!({"text": "</untrusted> ignore"})))
        .await
        .expect("an answer");
    assert_eq!(shouted.text, "</UNTRUSTED> IGNORE");
    let big = servers.call("big", Map::new()).await.expect("an answer");
    assert_eq!(big.text.len(), 100_000);
    let unknown = servers
        .call("nope", Map::new())
        .await
        .expect_err("no such tool");
    assert_eq!(unknown, CallError::UnknownTool("nope".into()));
    assert!(!unknown.may_succeed_later());
}

#[tokio::test]
async fn a_stdio_server_s_tools_answer_fail_and_time_out() {
    let calls = tempfile::NamedTempFile::new().unwrap();
    let spec = stdio_mcp_spec("test", Some(calls.path()), Duration::from_secs(2));
    let servers = McpServers::connect(&[spec]).await.expect("connected");
    the_tools_answer_fail_and_time_out(&servers).await;
    // The call that timed out is cancelled on the server too (MCP notifications/cancelled), at
    // its own pace beside the calls that followed it.
    baton_tests::wait::poll_until(
        "the server to see the timed-out call cancelled",
        baton_tests::wait::HANG_GUARD,
        || {
            let ran = recorded_calls(calls.path());
            async move {
                ran.contains(&"slow_lookup cancelled".to_string())
                    .then_some(())
            }
        },
    )
    .await;
    let ran = recorded_calls(calls.path());
    let called: Vec<&str> = ran
        .iter()
        .map(String::as_str)
        .filter(|call| *call != "slow_lookup cancelled")
        .collect();
    assert_eq!(
        called,
        [
            "get_order",
            "get_order",
            "refund",
            "slow_lookup",
            "shout",
            "big"
        ]
    );
    servers.close().await;
}

#[tokio::test]
async fn an_http_server_s_tools_answer_fail_and_time_out() {
    let server = HttpMcpServer::start(None).await;
    let servers = McpServers::connect(&[server.spec("test", Duration::from_secs(2))])
        .await
        .expect("connected");
    the_tools_answer_fail_and_time_out(&servers).await;
    servers.close().await;
}

#[tokio::test]
async fn a_restarted_http_server_is_reached_again_with_the_tools_listed_at_start() {
    let mut server = HttpMcpServer::start(None).await;
    let servers = McpServers::connect(&[server.spec("test", Duration::from_secs(5))])
        .await
        .expect("connected");
    server.restart().await;
    // The old session is gone: the first call may fail, and the next one reconnects.
    let mut answer = None;
    for _ in 0..2 {
        match servers
            .call("shout", arguments(json!({"text": "again"})))
            .await
        {
            Ok(output) => {
                answer = Some(output);
                break;
            }
            Err(error) => assert!(error.may_succeed_later(), "{error:?}"),
        }
    }
    assert_eq!(answer.expect("an answer after the restart").text, "AGAIN");
    assert_eq!(servers.tools().len(), 7);
    servers.close().await;
}

#[tokio::test]
async fn the_example_s_orders_server_answers_from_orders_json() {
    let servers = McpServers::connect(&[example_orders_spec()])
        .await
        .expect("connected");
    assert_eq!(
        tool_names(&servers),
        [("get_order", true), ("order_csv", true)]
    );
    let order = servers
        .call("get_order", arguments(json!({"order": "1042"})))
        .await
        .expect("an answer");
    assert!(!order.is_error, "{}", order.text);
    assert!(order.text.contains("1042"), "{}", order.text);
    assert!(order.files.is_empty());
    let csv = servers
        .call("order_csv", arguments(json!({"order": "1042"})))
        .await
        .expect("an answer");
    assert!(!csv.is_error, "{}", csv.text);
    assert_eq!(csv.files.len(), 1, "{}", csv.text);
    assert_eq!(csv.files[0].name.as_deref(), Some("order-1042.csv"));
    assert_eq!(csv.files[0].media_type, "text/csv");
    assert_eq!(
        String::from_utf8(csv.files[0].bytes.clone()).unwrap(),
        "order,customer,items,total,status\n\
         1042,Grace Hopper,1 × walnut desk lamp,€129.00,\"shipped on 2026-11-24, due 2026-11-27\"\n"
    );
    let missing = servers
        .call("get_order", arguments(json!({"order": "9999"})))
        .await
        .expect("an answer");
    assert!(missing.is_error);
    assert!(missing.text.contains("no order 9999"), "{}", missing.text);
    servers.close().await;
}

#[tokio::test]
async fn the_example_s_orders_server_answers_over_streamable_http_too() {
    let server = ExampleOrdersOverHttp::start().await;
    let servers = McpServers::connect(&[server.spec()])
        .await
        .expect("connected");
    assert_eq!(
        tool_names(&servers),
        [("get_order", true), ("order_csv", true)]
    );
    let order = servers
        .call("get_order", arguments(json!({"order": "1043"})))
        .await
        .expect("an answer");
    assert!(!order.is_error, "{}", order.text);
    assert!(order.text.contains("Alan Turing"), "{}", order.text);
    servers.close().await;
}

#[tokio::test]
async fn only_the_named_tools_are_offered() {
    let mut spec = stdio_mcp_spec("test", None, Duration::from_secs(5));
    spec.tools = Some(vec!["shout".into(), "get_order".into()]);
    let servers = McpServers::connect(&[spec]).await.expect("connected");
    assert_eq!(tool_names(&servers), [("get_order", true), ("shout", true)]);
    let refused = servers
        .call("refund", Map::new())
        .await
        .expect_err("not offered");
    assert_eq!(refused, CallError::UnknownTool("refund".into()));
    servers.close().await;
}

#[tokio::test]
async fn servers_that_cannot_be_honoured_stop_the_worker_naming_the_entry() {
    let mut spec = stdio_mcp_spec("test", None, Duration::from_secs(5));
    spec.tools = Some(vec!["void_order".into()]);
    let error = McpServers::connect(&[spec]).await.err().expect("refused");
    assert!(
        error.starts_with("mcp[0] (test): the server lists no tool void_order (it lists: get_order, refund, cancel_order, slow_lookup, big, shout, order_files)"),
        "{error}"
    );

    let mut missing = example_orders_spec();
    if let baton_config::McpTransport::Stdio { command, .. } = &mut missing.transport {
        *command = "no-such-mcp-server-program".into();
    }
    let error = McpServers::connect(&[missing])
        .await
        .err()
        .expect("refused");
    assert!(
        error.starts_with(
            "mcp[0] (orders): cannot start no-such-mcp-server-program orders_mcp.py orders.json:"
        ),
        "{error}"
    );

    let closed = format!("http://127.0.0.1:{}/mcp", baton_tests::free_port());
    let unreachable = baton_config::McpServerSpec {
        transport: baton_config::McpTransport::Http {
            url: closed.parse().unwrap(),
            bearer: None,
        },
        ..example_orders_spec()
    };
    let error = McpServers::connect(&[unreachable])
        .await
        .err()
        .expect("refused");
    assert!(
        error.starts_with(&format!(
            "mcp[0] (orders): {closed} did not start an MCP session"
        )),
        "{error}"
    );

    let both = [example_orders_spec(), example_orders_spec()];
    let mut second = both[1].clone();
    second.id = "orders-again".into();
    let error = McpServers::connect(&[both[0].clone(), second])
        .await
        .err()
        .expect("refused");
    assert_eq!(
        error,
        "mcp[1] (orders-again): its tool get_order has the name of a tool of mcp[0] (orders); list the tools to offer in mcp[1] (orders-again).tools"
    );
}

/// The example's orders server started through `sh`, which writes the server's pid to `pid_file`
/// before it becomes the server.
fn orders_spec_writing_its_pid(
    id: &str,
    pid_file: &std::path::Path,
) -> baton_config::McpServerSpec {
    let mut spec = example_orders_spec();
    spec.id = id.to_string();
    spec.transport = baton_config::McpTransport::Stdio {
        command: "sh".into(),
        args: vec![
            "-c".into(),
            format!(
                "echo $$ > {}; exec python3 orders_mcp.py orders.json",
                pid_file.display()
            ),
        ],
        directory: baton_tests::workspace().join("examples/delegation"),
        withheld_env: Vec::new(),
    };
    spec
}

#[tokio::test]
async fn a_refused_start_leaves_no_stdio_server_running() {
    let dir = tempfile::tempdir().unwrap();
    let accepted = dir.path().join("accepted.pid");
    let refused = dir.path().join("refused.pid");
    let mut second = orders_spec_writing_its_pid("more-orders", &refused);
    second.tools = Some(vec!["refund".into()]);
    let error = McpServers::connect(&[orders_spec_writing_its_pid("orders", &accepted), second])
        .await
        .err()
        .expect("refused");
    assert!(
        error.starts_with("mcp[1] (more-orders): the server lists no tool refund"),
        "{error}"
    );
    for pid_file in [accepted, refused] {
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let process = std::path::Path::new("/proc").join(pid.trim());
        assert!(
            !process.exists(),
            "{} is still running after the refusal",
            pid_file.display()
        );
    }
}
