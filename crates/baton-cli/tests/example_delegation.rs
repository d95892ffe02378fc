//! examples/delegation end to end, as the README runs it: run.sh with this build's `baton`
//! starts the example's model and `baton up ledger.toml front-desk.toml`, asks the front desk a
//! question over A2A, and prints the answer, which must be the ledger's, from orders.json, and
//! what the metrics endpoint counted. Then nothing of it may be left running.

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// What the example listens on: the model, the two gateways, the dev server and its UI, and the
/// metrics endpoint.
const PORTS: [u16; 6] = [8299, 8201, 8202, 7233, 8233, 9464];

#[test]
fn the_front_desk_delegates_an_order_question_to_the_ledger_and_relays_its_answer() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let venv_bin = workspace.join(".venv/bin");
    let path = format!(
        "{}:{}",
        venv_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("bash")
        .arg(workspace.join("examples/delegation/run.sh"))
        .arg("When did order 1042 ship?")
        .env("BATON", env!("CARGO_BIN_EXE_baton"))
        .env("PATH", path)
        .output()
        .expect("running examples/delegation/run.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "run.sh failed:\n{stderr}\n{stdout}"
    );
    assert_eq!(
        stdout.trim(),
        "Order 1042 (Grace Hopper: 1 × walnut desk lamp, €129.00) was shipped on 2026-11-24, due 2026-11-27.",
        "{stderr}"
    );
    assert!(
        stderr.contains("agent ledger: task queue ledger"),
        "{stderr}"
    );
    assert!(
        stderr.contains("agent front-desk: task queue front-desk"),
        "{stderr}"
    );
    assert!(stderr.contains("Web UI: http://127.0.0.1:8233"), "{stderr}");
    assert!(
        stderr.contains("metrics: http://127.0.0.1:9464/metrics"),
        "{stderr}"
    );
    for line in [
        r#"baton_delegations_started_total{agent="ledger",task_queue="front-desk"} 1"#,
        r#"baton_delegations_finished_total{agent="ledger",outcome="completed",task_queue="front-desk"} 1"#,
    ] {
        assert!(
            stderr.lines().any(|l| l == line),
            "no {line:?} in:\n{stderr}"
        );
    }
    for queue in ["front-desk", "ledger"] {
        let turns =
            format!(r#"baton_model_turns_total{{outcome="answered",task_queue="{queue}"}} "#);
        assert!(
            stderr.lines().any(|l| l.starts_with(&turns)),
            "no model turns of {queue} in:\n{stderr}"
        );
    }

    let deadline = Instant::now() + Duration::from_secs(15);
    for port in PORTS {
        while TcpListener::bind(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "port {port} is still taken after run.sh ended"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
