//! `baton task`: an A2A client of a Baton gateway (or of any A2A 1.0 agent) for operators.
//! `send` gives a task, or a message to one, and follows it live; `show`, `list` and `cancel`
//! read and stop tasks. Every call is made as the participant `--as` (X-Participant-Id), or, to
//! an agent whose card asks for a credential, with the token in `$BATON_TOKEN`, which says who
//! you are: a gateway shows a participant only the tasks they are on.
//!
//! Exit codes: 0 the task completed or waits for the caller; 1 it failed, was rejected or
//! cancelled; 2 the call itself failed; 3 it was still running when the command stopped.

mod render;
mod tree;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use a2a::{ListTasksRequest, Message, Part, Role, StreamResponse, Task};
use anyhow::Context;
use baton_a2a::{CardLimits, RemoteAgent};
use baton_config::{AgentAuth, EnvSecret, RemoteAgentSpec, Secret, Settings, Updates};
use baton_core::a2a_state::to_a2a;
use futures::StreamExt;
use url::Url;

use render::{
    changed_rows, exit_code_of, list_text, status_line, sub_task_line, sub_tasks_of, task_text,
};

/// The subcommands of `baton task`.
#[derive(clap::Subcommand, Debug)]
pub enum TaskCommand {
    /// Give a new task (or, with --task, a message to one) and follow it until it ends or waits
    /// for you, printing each state change and sub-task.
    Send {
        /// Which agent, and as whom.
        #[command(flatten)]
        target: Target,
        /// The task to send to; without it, the message starts a new task.
        #[arg(long, value_name = "ID")]
        task: Option<String>,
        /// Print each A2A event, then the task, as JSON lines.
        #[arg(long)]
        json: bool,
        /// The message.
        #[arg(required = true, value_name = "TEXT")]
        text: Vec<String>,
    },
    /// Print a task: its state, its answer and its sub-tasks.
    Show {
        /// Which agent, and as whom.
        #[command(flatten)]
        target: Target,
        /// The task's id.
        #[arg(value_name = "ID")]
        id: String,
        /// Print the task as A2A JSON.
        #[arg(long)]
        json: bool,
        /// Print the whole delegation tree below the task instead, across the Baton agents of
        /// the config's Temporal namespace: each task's agent, state, tokens and answer.
        #[arg(long, conflicts_with_all = ["json", "url"])]
        tree: bool,
    },
    /// List the tasks you are on, newest first.
    List {
        /// Which agent, and as whom.
        #[command(flatten)]
        target: Target,
        /// Only the tasks of this context.
        #[arg(long, value_name = "ID")]
        context: Option<String>,
        /// How many tasks to list.
        #[arg(long, default_value_t = 50, value_name = "N")]
        page_size: i32,
        /// Print the ListTasks response as A2A JSON.
        #[arg(long)]
        json: bool,
    },
    /// Cancel a task, and with it every open sub-task.
    Cancel {
        /// Which agent, and as whom.
        #[command(flatten)]
        target: Target,
        /// The task's id.
        #[arg(value_name = "ID")]
        id: String,
        /// Print the cancelled task as A2A JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Which agent to talk to, and as whom.
#[derive(clap::Args, Debug)]
pub struct Target {
    /// The agent's URL (its card is read from there).
    #[arg(long, value_name = "URL", conflicts_with = "config")]
    url: Option<Url>,
    /// A Baton config: the agent at its server.base_url. Without --url or --config, the config
    /// BATON_CONFIG names.
    #[arg(long, short, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The participant you act as (X-Participant-Id), where the agent takes asserted ids.
    #[arg(long = "as", value_name = "PARTICIPANT", default_value = "operator")]
    participant: String,
    /// The environment variable holding your token, presented as a bearer token when the
    /// agent's card asks for one.
    #[arg(long, value_name = "VARIABLE", default_value = "BATON_TOKEN")]
    token_env: String,
}

impl Target {
    /// Your token, as a bearer token (a Baton gateway's `bearer` and `oidc` schemes take it).
    fn credential(&self) -> Option<AgentAuth> {
        let token = std::env::var(&self.token_env)
            .ok()
            .filter(|t| !t.is_empty())?;
        let secret = EnvSecret {
            variable: self.token_env.clone(),
            secret: Secret::new(token),
        };
        Some(AgentAuth::Bearer(secret))
    }

    /// The config `--config` or `BATON_CONFIG` names, if any.
    fn config(&self) -> Option<PathBuf> {
        self.config.clone().or_else(|| {
            std::env::var_os(crate::CONFIG_VARIABLE)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        })
    }

    /// The settings of the config, for what only it can say (its Temporal namespace).
    fn settings(&self) -> anyhow::Result<Settings> {
        let config = self.config().with_context(|| {
            format!(
                "--tree reads the tree from Temporal: give --config FILE, or {} in the environment",
                crate::CONFIG_VARIABLE
            )
        })?;
        Ok(Settings::load(&config)?)
    }

    async fn connect(&self) -> anyhow::Result<RemoteAgent> {
        let url = match (&self.url, self.config()) {
            (Some(url), _) => url.clone(),
            (None, Some(config)) => {
                Settings::load(&config)?.server.base_url.with_context(|| {
                    format!(
                        "{}: server.base_url is not set, so it serves no gateway",
                        config.display()
                    )
                })?
            }
            (None, None) => anyhow::bail!(
                "say which agent: --url URL, --config FILE, or {} in the environment",
                crate::CONFIG_VARIABLE
            ),
        };
        let spec = RemoteAgentSpec {
            updates: Updates::Off,
            auth: self.credential(),
            ..RemoteAgentSpec::new("agent", url)
        };
        let http = reqwest::Client::new();
        Ok(RemoteAgent::connect(&spec, &self.participant, &http, CardLimits::default()).await?)
    }
}

/// Runs one `baton task` command. A call that fails is printed and exits 2; otherwise the exit
/// code follows the task (see the module docs).
pub async fn run(command: TaskCommand) -> anyhow::Result<ExitCode> {
    match run_command(command).await {
        Ok(code) => Ok(code),
        Err(error) => {
            crate::error_report::print_error_line(&format!("{error:#}"));
            Ok(ExitCode::from(2))
        }
    }
}

async fn run_command(command: TaskCommand) -> anyhow::Result<ExitCode> {
    match command {
        TaskCommand::Send {
            target,
            task,
            json,
            text,
        } => send(&target.connect().await?, task, &text.join(" "), json).await,
        TaskCommand::Show {
            target,
            id,
            tree: true,
            ..
        } => {
            let settings = target.settings()?;
            let client = crate::temporal::join(&settings, "baton task show --tree").await?;
            let reader = tree::Reader {
                client: &client,
                settings: &settings,
                timeout: settings.server.temporal_timeout,
            };
            let root = tree::read_tree(&reader, &id).await?;
            let lines = tree::Lines {
                now: std::time::SystemTime::now(),
                currency: &settings.model.currency,
            };
            println!("{}", tree::tree_text(&root, &lines));
            Ok(ExitCode::from(exit_code_of(&to_a2a(root.state))))
        }
        TaskCommand::Show {
            target, id, json, ..
        } => {
            let task = target.connect().await?.get_task(&id).await?;
            print_task(&task, json)?;
            Ok(ExitCode::from(exit_code_of(&task.status.state)))
        }
        TaskCommand::List {
            target,
            context,
            page_size,
            json,
        } => {
            let request = ListTasksRequest {
                context_id: context,
                status: None,
                page_size: Some(page_size),
                page_token: None,
                history_length: Some(0),
                status_timestamp_after: None,
                include_artifacts: None,
                tenant: None,
            };
            let listed = target.connect().await?.list_tasks(&request).await?;
            if json {
                println!("{}", serde_json::to_string(&listed)?);
            } else {
                println!("{}", list_text(&listed.tasks));
            }
            Ok(ExitCode::SUCCESS)
        }
        TaskCommand::Cancel { target, id, json } => {
            let task = target.connect().await?.cancel_task(&id).await?;
            print_task(&task, json)?;
            Ok(if task.status.state == a2a::TaskState::Canceled {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(exit_code_of(&task.status.state))
            })
        }
    }
}

fn print_task(task: &Task, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(task)?);
    } else {
        println!("{}", task_text(task));
    }
    Ok(())
}

/// Sends the message with SendStreamingMessage and prints what happens until the stream ends.
/// Sub-task rows travel in the task, not in the events: after each event, and every second
/// while it waits, the task is read again and its new or changed rows are printed.
async fn send(
    agent: &RemoteAgent,
    task_id: Option<String>,
    text: &str,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let message = Message {
        message_id: format!("cli-{}-{}", std::process::id(), now_nanos()),
        context_id: None,
        task_id,
        role: Role::User,
        parts: vec![Part::text(text.to_string())],
        metadata: None,
        extensions: None,
        reference_task_ids: None,
    };
    let mut stream = agent.send_streaming(message).await?;
    let mut id: Option<String> = None;
    let mut rows = Vec::new();
    loop {
        let event = tokio::select! {
            event = stream.next() => match event {
                Some(event) => Some(event.context("the stream broke")?),
                None => break,
            },
            () = tokio::time::sleep(Duration::from_secs(1)) => None,
        };
        if let Some(event) = &event {
            if json {
                println!("{}", serde_json::to_string(event)?);
            }
            if let StreamResponse::Task(task) = event {
                if id.is_none() && !json {
                    println!("task {}", task.id);
                }
                id = Some(task.id.clone());
            }
        }
        // The rows first, so a status that reports a sub-task's result follows its row.
        if let Some(id) = &id {
            let task = agent.get_task(id).await?;
            let now = sub_tasks_of(&task);
            if !json {
                for row in changed_rows(&rows, &now) {
                    println!("{}", sub_task_line(row));
                }
            }
            rows = now;
        }
        match &event {
            Some(StreamResponse::StatusUpdate(update)) if !json => {
                let sub_state = update
                    .metadata
                    .as_ref()
                    .and_then(|m| m.values().find_map(|v| v.get("sub_state")))
                    .and_then(|v| v.as_str());
                println!("{}", status_line(&update.status, sub_state));
            }
            Some(StreamResponse::Message(answer)) if !json => {
                println!("{}", render::text_of(answer));
            }
            _ => {}
        }
    }
    let Some(id) = id else {
        // The agent answered with a message and made no task: nothing is left to run.
        return Ok(ExitCode::SUCCESS);
    };
    let task = agent.get_task(&id).await?;
    if json {
        println!(
            "{}",
            serde_json::to_string(&StreamResponse::Task(task.clone()))?
        );
    }
    Ok(ExitCode::from(exit_code_of(&task.status.state)))
}

fn now_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}
