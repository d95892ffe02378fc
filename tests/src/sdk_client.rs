//! The official Python a2a-sdk client (`tests/peers/a2a_client.py`), one operation per run.

use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{ChildStdout, Command};

use crate::wait::{HANG_GUARD, within};
use crate::{venv_program, workspace};

/// A caller of an A2A agent through the official SDK, over one binding, as one participant.
pub struct SdkClient {
    pub url: String,
    pub binding: &'static str,
    pub participant: String,
    /// The card's scheme to present a credential for, and the credential.
    pub credential: Option<(String, String)>,
    /// The extensions it activates; none, as a generic client.
    pub extensions: Vec<String>,
}

/// What one run printed: the JSON lines, or the A2A error it ended with.
#[derive(Debug)]
pub enum SdkOutcome {
    Ok(Vec<Value>),
    Error { reason: String, message: String },
}

impl SdkOutcome {
    pub fn ok(self) -> Vec<Value> {
        match self {
            SdkOutcome::Ok(lines) => lines,
            SdkOutcome::Error { reason, message } => {
                panic!("the a2a-sdk client got an error: {reason}: {message}")
            }
        }
    }

    /// The ErrorInfo reason of the error the call ended with.
    pub fn reason(&self) -> &str {
        match self {
            SdkOutcome::Error { reason, .. } => reason,
            SdkOutcome::Ok(lines) => panic!("expected an A2A error, got {lines:?}"),
        }
    }

    /// The message of the error the call ended with.
    pub fn message(&self) -> &str {
        match self {
            SdkOutcome::Error { message, .. } => message,
            SdkOutcome::Ok(lines) => panic!("expected an error, got {lines:?}"),
        }
    }
}

impl SdkClient {
    pub fn new(url: &str, binding: &'static str, participant: &str) -> SdkClient {
        SdkClient {
            url: url.to_string(),
            binding,
            participant: participant.to_string(),
            credential: None,
            extensions: Vec::new(),
        }
    }

    /// The same client, activating the status extension, as tiny-harness and Baton do: a new
    /// task is a conversation that parks awaiting the next message.
    pub fn speaking_the_status_extension(mut self) -> SdkClient {
        self.extensions
            .push(baton_core::extensions::STATUS_EXTENSION.to_string());
        self
    }

    /// A client that presents `credential` as the card's scheme `scheme` says, through the SDK's
    /// own AuthInterceptor, and asserts no participant: a standard client with nothing but a
    /// token.
    pub fn with_credential(
        url: &str,
        binding: &'static str,
        scheme: &str,
        credential: &str,
    ) -> SdkClient {
        SdkClient {
            credential: Some((scheme.to_string(), credential.to_string())),
            ..SdkClient::new(url, binding, "")
        }
    }

    /// The client's command for `op` with extra arguments.
    fn command(&self, op: &str, args: &[&str]) -> Command {
        let mut command = Command::new(venv_program("python"));
        command
            .arg(workspace().join("tests/peers/a2a_client.py"))
            .args(["--url", &self.url, "--binding", self.binding])
            .args(["--participant", &self.participant])
            .args(self.credential.iter().flat_map(|(scheme, credential)| {
                [
                    "--scheme",
                    scheme.as_str(),
                    "--credential",
                    credential.as_str(),
                ]
            }))
            .args(
                self.extensions
                    .iter()
                    .flat_map(|uri| ["--extension", uri.as_str()]),
            )
            .arg(op)
            .args(args)
            .kill_on_drop(true);
        command
    }

    /// Starts a streaming `op` (`stream`, `subscribe`) whose events the test reads as they
    /// come, e.g. to know the subscription is open before it acts.
    pub fn open(&self, op: &str, args: &[&str]) -> SdkStream {
        let mut child = self
            .command(op, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("running the a2a-sdk client");
        let stdout = child.stdout.take().expect("piped stdout");
        SdkStream {
            _child: child,
            lines: BufReader::new(stdout).lines(),
        }
    }

    /// Runs `op` with extra arguments, e.g. `call("send", &["--text", "hi"])`.
    pub async fn call(&self, op: &str, args: &[&str]) -> SdkOutcome {
        let output = self
            .command(op, args)
            .output()
            .await
            .expect("running the a2a-sdk client");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let lines: Vec<Value> = stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
            .collect();
        match (output.status.code(), lines.first()) {
            (Some(0), _) => SdkOutcome::Ok(lines),
            (Some(3), Some(line)) => SdkOutcome::Error {
                reason: line["error"]["reason"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                message: line["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            },
            _ => panic!(
                "the a2a-sdk client failed ({}):\n{stdout}\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ),
        }
    }
}

/// A streaming call under way: its events, one JSON line each, as the client prints them. The
/// client is killed on drop.
pub struct SdkStream {
    _child: tokio::process::Child,
    lines: Lines<BufReader<ChildStdout>>,
}

impl SdkStream {
    /// The next event; fails the test when none comes, or the stream ends first.
    pub async fn next_event(&mut self) -> Value {
        let line = within(
            "the next streamed event",
            HANG_GUARD,
            self.lines.next_line(),
        )
        .await
        .expect("reading the a2a-sdk client's output")
        .expect("the stream ended before the next event");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}"))
    }

    /// Every event left until the stream ends; fails the test when it does not end.
    pub async fn rest(mut self) -> Vec<Value> {
        within("the stream to end", HANG_GUARD, async {
            let mut events = Vec::new();
            while let Some(line) = self
                .lines
                .next_line()
                .await
                .expect("reading the a2a-sdk client's output")
            {
                if !line.trim().is_empty() {
                    events.push(
                        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line}")),
                    );
                }
            }
            events
        })
        .await
    }
}
