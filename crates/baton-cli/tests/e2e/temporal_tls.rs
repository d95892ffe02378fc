//! The Temporal connection over TLS, against a real dev server behind a TLS front that requires a
//! client certificate (the dev server has no TLS of its own): a worker with the right CA, client
//! certificate and server name (and the smallest slots and pollers) runs a task and shows
//! Temporal its own identity; each mistake an
//! operator can make stops `baton worker` at once with one line naming the setting to change; and
//! a namespace without Baton's search attributes is refused at start, not at the first task.

use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::baton;
use baton_proto::TaskState;
use baton_tests::engine::{TestTemporal, WorkerConfig, WorkerProcess, task_input};
use baton_tests::fake_model::{FakeModel, reply};
use baton_tests::tls_front::{SERVER_NAME, TlsFront};
use temporalio_client::tonic::Request;
use temporalio_common::protos::temporal::api::enums::v1::{TaskQueueKind, TaskQueueType};
use temporalio_common::protos::temporal::api::taskqueue::v1::TaskQueue;
use temporalio_common::protos::temporal::api::workflowservice::v1::{
    DescribeNamespaceRequest, DescribeTaskQueueRequest,
};

/// `tls_*` lines naming files of the front's PKI; `None` leaves a key out.
fn tls_lines(
    front: &TlsFront,
    ca: Option<&str>,
    client: Option<(&str, &str)>,
    server_name: Option<&str>,
) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(ca) = ca {
        lines.push(format!("tls_ca = \"{}\"", front.file(ca).display()));
    }
    if let Some((cert, key)) = client {
        lines.push(format!("tls_cert = \"{}\"", front.file(cert).display()));
        lines.push(format!("tls_key = \"{}\"", front.file(key).display()));
    }
    if let Some(name) = server_name {
        lines.push(format!("tls_server_name = \"{name}\""));
    }
    lines
}

/// Runs `baton worker` on `config` until it exits by itself, which a connection error must make
/// it do (a worker that connects would run for ever: the bound says so).
async fn run_to_exit(config: &WorkerConfig) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("baton.toml");
    std::fs::write(&path, config.render()).unwrap();
    let run = tokio::process::Command::new(baton())
        .args(["worker", "--config"])
        .arg(&path)
        .env(
            baton_config::DEPLOYMENT_SECRET_VARIABLE,
            baton_tests::TEST_DEPLOYMENT_SECRET,
        )
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("baton worker should stop by itself on a connection error")
        .unwrap()
}

/// The one `error:` line of a worker that could not connect: exactly one, with `expected` in it,
/// and none of the transport's Debug text.
fn assert_refused(output: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line: {stderr}");
    assert!(errors[0].contains(expected), "{expected:?} not in {stderr}");
    for noise in ["Status {", "Error(", "Custom {", "source: Some"] {
        assert!(!stderr.contains(noise), "Debug text {noise:?} in {stderr}");
    }
    assert_eq!(stderr.matches(expected).count(), 1, "said once: {stderr}");
}

#[tokio::test]
async fn a_worker_runs_a_task_over_mtls_and_shows_its_own_identity() {
    let temporal = TestTemporal::start().await;
    let front = TlsFront::start(temporal.address()).await;
    let model = FakeModel::start(vec![reply("done over mTLS")]).await;
    let mut config = WorkerConfig::new(&temporal, &model.base_url());
    config.temporal_address = front.address();
    config.tls = true;
    config.temporal_extra = tls_lines(
        &front,
        Some("ca.pem"),
        Some(("client.pem", "client.key")),
        Some(SERVER_NAME),
    );
    // The tuning keys, at their smallest, reach a worker the SDK accepts.
    config.temporal_extra.extend(
        [
            "workflow_slots = 2",
            "activity_slots = 2",
            "workflow_pollers = 2",
            "activity_pollers = 1",
            "drain_grace = \"1s\"",
        ]
        .map(String::from),
    );
    let worker = WorkerProcess::start(baton(), &config.render()).await;

    let view = temporal
        .run_to_end(
            &config.task_queue,
            "t-mtls",
            task_input("n", "g"),
            Duration::from_secs(60),
        )
        .await;
    assert_eq!(view.state, TaskState::Completed);

    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let expected = format!("front-desk:{}@{}", worker.pid(), host.trim());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pollers = workflow_pollers(&temporal, &config.task_queue).await;
        if pollers.contains(&expected) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no poller named {expected:?}: {pollers:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn workflow_pollers(temporal: &TestTemporal, task_queue: &str) -> Vec<String> {
    let request = DescribeTaskQueueRequest {
        namespace: "default".into(),
        task_queue: Some(TaskQueue {
            name: task_queue.into(),
            kind: TaskQueueKind::Normal as i32,
            ..Default::default()
        }),
        task_queue_type: TaskQueueType::Workflow as i32,
        ..Default::default()
    };
    temporal
        .client
        .connection()
        .workflow_service()
        .describe_task_queue(Request::new(request))
        .await
        .unwrap()
        .into_inner()
        .pollers
        .into_iter()
        .map(|poller| poller.identity)
        .collect()
}

#[tokio::test]
async fn each_tls_mistake_stops_the_worker_with_the_setting_to_change() {
    let temporal = TestTemporal::start().await;
    let front = TlsFront::start(temporal.address()).await;
    let good_client = Some(("client.pem", "client.key"));
    let cases: Vec<(&str, String, bool, Vec<String>, &str)> = vec![
        (
            "TLS to a plaintext server",
            temporal.address().to_string(),
            true,
            vec![],
            "the server does not speak TLS: for a plaintext server set temporal.tls = false",
        ),
        (
            "plaintext to a TLS server",
            front.address(),
            false,
            vec![],
            "if it uses TLS, set temporal.tls = true",
        ),
        (
            "a CA the system does not trust",
            front.address(),
            true,
            tls_lines(&front, None, good_client, Some(SERVER_NAME)),
            "set temporal.tls_ca to that CA's PEM file",
        ),
        (
            "the wrong CA",
            front.address(),
            true,
            tls_lines(&front, Some("other-ca.pem"), good_client, Some(SERVER_NAME)),
            "set temporal.tls_ca to that CA's PEM file",
        ),
        (
            "a certificate for another name",
            front.address(),
            true,
            tls_lines(&front, Some("ca.pem"), good_client, None),
            "set temporal.tls_server_name to a name the certificate holds",
        ),
        (
            "no client certificate",
            front.address(),
            true,
            tls_lines(&front, Some("ca.pem"), None, Some(SERVER_NAME)),
            "set temporal.tls_cert and temporal.tls_key",
        ),
        (
            "a client certificate of another CA",
            front.address(),
            true,
            tls_lines(
                &front,
                Some("ca.pem"),
                Some(("other-client.pem", "other-client.key")),
                Some(SERVER_NAME),
            ),
            "temporal.tls_cert must be signed by a CA the server trusts",
        ),
        (
            "a key where the certificate should be",
            front.address(),
            true,
            tls_lines(
                &front,
                Some("ca.pem"),
                Some(("client.key", "client.key")),
                Some(SERVER_NAME),
            ),
            "temporal.tls_cert: cannot use",
        ),
        (
            "a missing CA file",
            front.address(),
            true,
            tls_lines(&front, Some("absent.pem"), good_client, Some(SERVER_NAME)),
            "temporal.tls_ca: cannot use",
        ),
    ];
    let model = FakeModel::start(vec![]).await;
    for (what, address, tls, lines, expected) in cases {
        let mut config = WorkerConfig::new(&temporal, &model.base_url());
        config.temporal_address = address;
        config.tls = tls;
        config.temporal_extra = lines;
        eprintln!("case: {what}");
        assert_refused(&run_to_exit(&config).await, expected);
    }
}

#[tokio::test]
async fn a_namespace_without_the_search_attributes_is_refused_at_start() {
    let temporal = TestTemporal::start().await;
    let namespace = "bare";
    let created = tokio::process::Command::new(baton_tests::venv_program("temporal"))
        .args([
            "operator",
            "namespace",
            "create",
            "--address",
            temporal.address(),
            namespace,
        ])
        .output()
        .await
        .unwrap();
    assert!(created.status.success(), "{created:?}");
    let mut service = temporal.client.connection().workflow_service();
    // A new namespace answers once the frontend's cache has it.
    let deadline = Instant::now() + Duration::from_secs(30);
    while service
        .describe_namespace(Request::new(DescribeNamespaceRequest {
            namespace: namespace.into(),
            ..Default::default()
        }))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "namespace {namespace} never answered"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let model = FakeModel::start(vec![]).await;
    let mut config = WorkerConfig::new(&temporal, &model.base_url());
    config.temporal_extra = vec![format!("namespace = \"{namespace}\"")];
    assert_refused(
        &run_to_exit(&config).await,
        "temporal.search_attributes is true, but namespace \"bare\" lacks A2AContextId (Keyword)",
    );
}

#[tokio::test]
async fn a_temporal_toml_profile_and_the_temporal_variables_choose_the_cluster_and_its_mtls() {
    let temporal = TestTemporal::start().await;
    let front = TlsFront::start(temporal.address()).await;
    let model = FakeModel::start(vec![reply("done through the profile")]).await;
    let key = std::fs::read_to_string(front.file("client.key")).unwrap();
    let profiles = tempfile::NamedTempFile::new().unwrap();
    // `default` points nowhere: only the profile TEMPORAL_PROFILE names may be used.
    std::fs::write(
        profiles.path(),
        format!(
            "[profile.default]\naddress = \"127.0.0.1:1\"\n\n\
             [profile.cluster]\naddress = \"{}\"\nnamespace = \"not-this-one\"\n\n\
             [profile.cluster.tls]\nserver_name = \"{SERVER_NAME}\"\n\
             server_ca_cert_path = \"{}\"\nclient_cert_path = \"{}\"\n",
            front.address(),
            front.file("ca.pem").display(),
            front.file("client.pem").display(),
        ),
    )
    .unwrap();
    let queue = format!("tq-profile-{}", std::process::id());
    // No mode and no address in the file: the shared configuration gives both.
    let config = format!(
        "[agent]\nid = \"front-desk\"\n[temporal]\ntask_queue = \"{queue}\"\n\
         search_attributes = true\n[model]\nbase_url = \"{}\"\nmodel = \"fake-model\"\n",
        model.base_url()
    );
    let profile_path = profiles.path().display().to_string();
    let worker = WorkerProcess::start_with_env(
        baton(),
        &config,
        &[
            ("TEMPORAL_CONFIG_FILE", profile_path.as_str()),
            ("TEMPORAL_PROFILE", "cluster"),
            // A variable wins over the profile; the key is given inline.
            ("TEMPORAL_NAMESPACE", "default"),
            ("TEMPORAL_TLS_CLIENT_KEY_DATA", key.as_str()),
            ("TEMPORAL_GRPC_META_X_BATON_TEST", "profile"),
        ],
    )
    .await;

    temporal
        .start_task(&queue, "t-profile", task_input("n", "g"))
        .await;
    let view = temporal
        .wait_for_task("t-profile", Duration::from_secs(60), |v| {
            v.state.is_terminal()
        })
        .await;
    assert_eq!(view.state, TaskState::Completed);
    assert!(
        worker.logged(&["127.0.0.1:1"]).is_empty(),
        "the default profile was never used"
    );
}
