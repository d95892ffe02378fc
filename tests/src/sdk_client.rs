//! The official Python a2a-sdk client (`tests/peers/a2a_client.py`), one operation per run.

use serde_json::Value;
use tokio::process::Command;

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

    /// Runs `op` with extra arguments, e.g. `call("send", &["--text", "hi"])`.
    pub async fn call(&self, op: &str, args: &[&str]) -> SdkOutcome {
        let output = Command::new(venv_program("python"))
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
            .kill_on_drop(true)
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
