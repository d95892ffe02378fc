//! The examples end to end, as the README runs them, each with this build's `baton`, after which
//! nothing of them may be left running:
//! - examples/delegation: run.sh starts the example's model and `baton up ledger.toml
//!   front-desk.toml`, asks the front desk a question over A2A, and prints the answer, which must
//!   be the ledger's, from orders.json, and what the metrics endpoint counted; asked for a CSV,
//!   the ledger's file comes with the answer;
//! - examples/courier: run.sh installs and starts an @a2a-js/sdk agent, the courier, that asks a
//!   question; the front desk asks the customer, and the customer's answer, sent with
//!   `baton task send --task`, reaches the courier, whose quote comes back.

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// What the delegation example listens on: the model, the two gateways, the dev server and its
/// UI, and the metrics endpoint.
const PORTS: [u16; 6] = [8299, 8201, 8202, 7233, 8233, 9464];
/// What the courier example listens on: the courier, the gateway, the model, the dev server and
/// its UI.
const COURIER_PORTS: [u16; 5] = [8311, 8312, 8399, 7243, 8243];

/// Runs the delegation example's run.sh with this build's `baton` and `env`.
fn run_example(env: &[(&str, &str)]) -> (String, String) {
    run("delegation", &["When did order 1042 ship?"], env)
}

/// Runs examples/`example`/run.sh with `args`, this build's `baton` and `env`; returns its
/// stdout and stderr.
fn run(example: &str, args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let venv_bin = workspace.join(".venv/bin");
    let path = format!(
        "{}:{}",
        venv_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("bash")
        .arg(workspace.join(format!("examples/{example}/run.sh")))
        .args(args)
        .env("BATON", env!("CARGO_BIN_EXE_baton"))
        .env("PATH", path)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("running examples/{example}/run.sh: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        output.status.success(),
        "run.sh failed:\n{stderr}\n{stdout}"
    );
    (stdout, stderr)
}

/// The answer the ledger gives from orders.json, through its get_order MCP tool.
const ANSWER: &str = "Order 1042 (Grace Hopper: 1 × walnut desk lamp, €129.00) was shipped on 2026-11-24, due 2026-11-27.";

/// What run.sh prints when the customer asks for order 1043 as a CSV: the answer, then the file
/// that came with it.
const CSV_ANSWER: &str = "Here is the order as a CSV file: order-1043.csv.
--- order-1043.csv (text/csv, 121 bytes, made by sub-task customer question on ledger)
order,customer,items,total,status
1043,Alan Turing,\"3 × notebook, 1 × fountain pen\",€61.50,\"packed, not yet shipped\"
";

/// Waits until nothing of the example listens on `ports` any more.
fn wait_until_ports_are_free(ports: &[u16]) {
    let deadline = Instant::now() + Duration::from_secs(15);
    for &port in ports {
        while TcpListener::bind(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "port {port} is still taken after run.sh ended"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A process killed on drop.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

#[test]
fn the_front_desk_delegates_an_order_question_to_the_ledger_and_relays_its_answer() {
    let (stdout, stderr) = run_example(&[]);
    assert_eq!(stdout.trim(), ANSWER, "{stderr}");
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
        r#"baton_tool_calls_total{outcome="answered",task_queue="ledger",tool="get_order"} 1"#,
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
    wait_until_ports_are_free(&PORTS);

    // Asked for a file, the ledger answers with its order_csv tool's CSV, which reaches the
    // customer as an artifact beside the answer, byte for byte.
    let (stdout, stderr) = run("delegation", &["Send me order 1043 as a CSV file."], &[]);
    assert_eq!(stdout, CSV_ANSWER, "{stderr}");
    assert!(
        stderr.lines().any(|l| l
            == r#"baton_tool_calls_total{outcome="answered",task_queue="ledger",tool="order_csv"} 1"#),
        "{stderr}"
    );
    wait_until_ports_are_free(&PORTS);

    // The same example on another OpenAI-compatible endpoint, as the README runs it on a real
    // model: here the example's model again, on a port of its own, under another model name.
    let port = baton_tests::free_port();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut model = Command::new("python3")
        .arg(workspace.join("examples/delegation/model.py"))
        .args(["--port", &port.to_string()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("starting model.py");
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(model.stdout.take().expect("piped stdout")),
        &mut ready,
    )
    .expect("model.py's ready line");
    assert!(ready.starts_with("ready"), "{ready}");
    let _model = Killed(model);
    let url = format!("http://127.0.0.1:{port}/v1");
    let (stdout, stderr) = run_example(&[
        ("BATON_MODEL_BASE_URL", url.as_str()),
        ("BATON_MODEL", "any-model"),
    ]);
    assert_eq!(stdout.trim(), ANSWER, "{stderr}");
    assert!(
        stderr.contains(&format!("== the model: any-model at {url}")),
        "{stderr}"
    );
    wait_until_ports_are_free(&PORTS);
}

#[test]
fn the_front_desk_asks_the_customer_what_an_a2a_js_courier_asks_and_relays_the_quote() {
    let (stdout, stderr) = run(
        "courier",
        &["How much to ship order 1042 to Lyon?", "Express, please."],
        &[],
    );
    assert_eq!(
        stdout.trim(),
        "Express shipping to Lyon: €19.00, delivered the next working day.",
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "who is asked: Standard shipping (3 working days, €6.50) or express (next working \
             day, €19.00)?"
        ),
        "the courier's question reached the customer: {stderr}"
    );
    assert!(stderr.contains("Web UI: http://127.0.0.1:8243"), "{stderr}");
    wait_until_ports_are_free(&COURIER_PORTS);
}
