//! The commands that start an embedded Temporal server, `baton temporal serve` and `baton up`:
//! the Web UI URL is printed, and Ctrl-C or SIGTERM stops the server with Baton, leaving no
//! process behind.

use std::process::Stdio;
use std::time::Duration;

use baton_tests::{children_of, free_ports, venv_program, wait_server_gone};
use tokio::io::{AsyncBufReadExt, BufReader};

fn config(state: &std::path::Path) -> String {
    config_on(state, free_ports())
}

/// The embedded server of `state` on these two ports.
fn config_on(state: &std::path::Path, [port, ui_port]: [u16; 2]) -> String {
    format!(
        r#"
        [agent]
        id = "serve-test"
        [temporal.embedded]
        binary = "{}"
        database = "{}"
        port = {port}
        ui_port = {ui_port}
        "#,
        venv_program("temporal").display(),
        state.join("temporal.sqlite").display(),
    )
}

/// `baton temporal serve` prints the Web UI URL, and SIGTERM or Ctrl-C stops the server with it.
#[tokio::test]
async fn the_baton_process_stops_its_server_on_sigterm_and_on_ctrl_c() {
    for signal in [libc_signal::TERM, libc_signal::INT] {
        let state = tempfile::tempdir().unwrap();
        let config_path = state.path().join("baton.toml");
        std::fs::write(&config_path, config(state.path())).unwrap();
        let mut baton = tokio::process::Command::new(env!("CARGO_BIN_EXE_baton"))
            .args(["temporal", "serve", "--config"])
            .arg(&config_path)
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(baton.stdout.take().unwrap()).lines();
        let mut ui = None;
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("Web UI:") {
                ui = Some(url.trim().to_string());
                break;
            }
        }
        let ui = ui.expect("baton prints the Web UI URL");
        assert!(ui.starts_with("http://127.0.0.1:"), "{ui}");
        let server_pids = children_of(baton.id().unwrap());
        assert_eq!(server_pids.len(), 1, "one Temporal server: {server_pids:?}");

        std::process::Command::new("kill")
            .args([signal, &baton.id().unwrap().to_string()])
            .status()
            .unwrap();
        let status = tokio::time::timeout(Duration::from_secs(20), baton.wait())
            .await
            .expect("baton exits after the signal")
            .unwrap();
        assert!(status.success(), "{status}");
        wait_server_gone(server_pids[0]).await;
    }
}

/// An agent for `baton up` on the embedded server of `state`, with a gateway on a free port.
fn up_config(state: &std::path::Path, id: &str) -> String {
    let [temporal, ui, port] = free_ports();
    format!(
        "{}\n[server]\nbind = \"127.0.0.1:{port}\"\nbase_url = \"http://127.0.0.1:{port}\"\n",
        config_on(state, [temporal, ui]).replace("serve-test", id)
    )
}

/// `baton up` with two configs: one dev server, both agents' lines and gateways, and Ctrl-C
/// stops it all.
#[tokio::test]
async fn baton_up_runs_two_agents_on_one_server_and_ctrl_c_stops_everything() {
    let state = tempfile::tempdir().unwrap();
    let (desk, ledger) = (
        state.path().join("desk.toml"),
        state.path().join("ledger.toml"),
    );
    std::fs::write(&desk, up_config(state.path(), "desk")).unwrap();
    std::fs::write(&ledger, up_config(state.path(), "ledger")).unwrap();
    let mut baton = tokio::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .arg("up")
        .args([&desk, &ledger])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(baton.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        let ready = line.starts_with("baton up:");
        printed.push(line);
        if ready {
            break;
        }
    }
    let text = printed.join("\n");
    assert!(text.contains("baton up: 2 agents ready"), "{text}");
    let gateways: Vec<&str> = printed
        .iter()
        .filter(|l| l.starts_with("agent "))
        .filter_map(|l| l.split("A2A at ").nth(1))
        .collect();
    assert_eq!(gateways.len(), 2, "{text}");
    for gateway in gateways {
        let card = reqwest::get(format!("{gateway}.well-known/agent-card.json"))
            .await
            .unwrap();
        assert_eq!(card.status(), 200, "{gateway}");
    }
    assert_eq!(text.matches("Web UI:").count(), 1, "one server: {text}");
    let server_pids = children_of(baton.id().unwrap());
    assert_eq!(server_pids.len(), 1, "one Temporal server: {server_pids:?}");

    std::process::Command::new("kill")
        .args([libc_signal::INT, &baton.id().unwrap().to_string()])
        .status()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(30), baton.wait())
        .await
        .expect("baton up exits after Ctrl-C")
        .unwrap();
    assert!(status.success(), "{status}");
    wait_server_gone(server_pids[0]).await;
}

#[tokio::test]
async fn baton_up_refuses_two_agents_with_one_id_before_starting_anything() {
    let state = tempfile::tempdir().unwrap();
    let (one, two) = (state.path().join("one.toml"), state.path().join("two.toml"));
    std::fs::write(&one, up_config(state.path(), "same")).unwrap();
    std::fs::write(&two, up_config(state.path(), "same")).unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .arg("up")
        .args([&one, &two])
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("agent.id \"same\" is in both"), "{stderr}");
    assert!(
        !state.path().join("temporal.sqlite").exists(),
        "no server was started"
    );
}

mod libc_signal {
    pub const TERM: &str = "-TERM";
    pub const INT: &str = "-INT";
}
