//! `baton`: the command line. Each subcommand is a function of the `baton-cli` library; this file
//! only parses the arguments and turns the outcome into an exit code.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// The environment variable that names the config when `--config` is not given.
const CONFIG_VARIABLE: &str = baton_cli::CONFIG_VARIABLE;

/// `baton --version`: the release and the commit it was built from.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("BATON_COMMIT"), ")");

/// Baton: a durable agent harness on Temporal that delegates to other A2A agents.
#[derive(Parser)]
#[command(name = "baton", version = VERSION, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Inspect the agents Baton can delegate to.
    Agents {
        #[command(subcommand)]
        command: AgentsCommand,
    },
    /// Check a config without contacting anything.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Serve Baton as an A2A 1.0 agent on [server] bind, with Temporal behind every call.
    Gateway {
        /// The agent's baton.toml.
        #[arg(long, short, value_name = "FILE", env = CONFIG_VARIABLE)]
        config: PathBuf,
    },
    /// Run a Temporal worker for TaskWorkflow, RemoteTaskWorkflow and their activities.
    Worker {
        /// The agent's baton.toml.
        #[arg(long, short, value_name = "FILE", env = CONFIG_VARIABLE)]
        config: PathBuf,
    },
    /// Run every agent of the given configs in one process: workers, gateways, and one embedded
    /// Temporal dev server for the agents in embedded mode. Ctrl-C stops everything.
    Up {
        /// One baton.toml per agent.
        #[arg(required = true, value_name = "CONFIG")]
        configs: Vec<PathBuf>,
    },
    /// Replay workflow histories (`temporal workflow show --output json`) against this build's
    /// workflow code, to check an upgrade before deploying it.
    Replay(baton_cli::replay::ReplayArgs),
    /// Give, follow, show, list and cancel tasks on a Baton agent (or any A2A 1.0 agent).
    Task {
        #[command(subcommand)]
        command: baton_cli::task_cli::TaskCommand,
    },
    /// Run the embedded Temporal dev server of a config until Ctrl-C or SIGTERM.
    Temporal {
        #[command(subcommand)]
        command: TemporalCommand,
    },
    /// Print a shell completion script, e.g. `baton completions bash > /etc/bash_completion.d/baton`.
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `baton man > /usr/local/share/man/man1/baton.1`.
    Man,
}

#[derive(Subcommand)]
enum AgentsCommand {
    /// Fetch and validate every agent's card, then print the roster the model will see.
    Check {
        /// The agent's baton.toml.
        #[arg(long, short, value_name = "FILE", env = CONFIG_VARIABLE)]
        config: PathBuf,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Load and validate a config as a worker would, contacting nothing, and print the settings
    /// in effect with where each value came from (file, environment, Temporal profile, default).
    Check {
        /// The agent's baton.toml.
        #[arg(long, short, value_name = "FILE", env = CONFIG_VARIABLE)]
        config: PathBuf,
    },
}

#[derive(Subcommand)]
enum TemporalCommand {
    /// Start `temporal server start-dev` with the config's [temporal.embedded] settings.
    Serve {
        /// The agent's baton.toml, whose [temporal.embedded] is used.
        #[arg(long, short, value_name = "FILE", env = CONFIG_VARIABLE)]
        config: PathBuf,
    },
}

impl Command {
    /// The commands whose output feeds other tools (`baton task list --json | head`); the rest
    /// serve, and keep Rust's handling of a closed pipe (an error, not the end of the process).
    fn prints_for_a_pipeline(&self) -> bool {
        matches!(
            self,
            Command::Task { .. }
                | Command::Agents { .. }
                | Command::Config { .. }
                | Command::Replay(_)
                | Command::Completions { .. }
                | Command::Man
        )
    }
}

/// Ends the process quietly when the reader of its output goes away, as Unix tools end, instead
/// of panicking in `println!` on the closed pipe. A connection the server closes mid-write ends
/// the command the same way.
#[allow(unsafe_code, reason = "a libc call, with its SAFETY comment")]
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: restoring the default disposition of SIGPIPE installs no handler and touches no
    // memory of this process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    baton_cli::logging::init();
    let cli = Cli::parse();
    if cli.command.prints_for_a_pipeline() {
        end_quietly_on_a_closed_pipe();
    }
    let outcome = match cli.command {
        Command::Agents {
            command: AgentsCommand::Check { config },
        } => baton_cli::agents_check::run(&config).await,
        Command::Config {
            command: ConfigCommand::Check { config },
        } => baton_cli::config_check::run(&config),
        Command::Worker { config } => baton_cli::worker::run(&config).await,
        Command::Gateway { config } => baton_cli::gateway::run(&config).await,
        Command::Up { configs } => baton_cli::up::run(&configs).await,
        Command::Replay(args) => baton_cli::replay::run(&args).await,
        Command::Task { command } => baton_cli::task_cli::run(command).await,
        Command::Temporal {
            command: TemporalCommand::Serve { config },
        } => baton_cli::temporal_serve::run(&config).await,
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "baton", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => clap_mangen::Man::new(Cli::command())
            .render(&mut std::io::stdout())
            .map(|()| ExitCode::SUCCESS)
            .map_err(anyhow::Error::from),
    };
    baton_cli::tracing_export::shutdown().await;
    match outcome {
        Ok(code) => code,
        Err(error) => {
            baton_cli::error_report::print_error_line(&baton_cli::error_report::error_line(&error));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    #[test]
    fn completions_and_the_manual_cover_every_command() {
        let mut script = Vec::new();
        clap_complete::generate(
            clap_complete::Shell::Bash,
            &mut Cli::command(),
            "baton",
            &mut script,
        );
        let script = String::from_utf8(script).unwrap();
        for word in ["worker", "gateway", "task", "--config", "--json"] {
            assert!(script.contains(word), "the bash completion lacks {word}");
        }
        let mut page = Vec::new();
        clap_mangen::Man::new(Cli::command())
            .render(&mut page)
            .unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(page.starts_with(".ie"), "{page}");
        assert!(page.contains(".TH baton"), "{page}");
        assert!(page.contains("worker"), "{page}");
    }

    /// Every command, option and argument says what it is in `--help`.
    #[test]
    fn every_command_and_option_has_help() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in command.get_arguments() {
                if arg.get_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                let path = format!("{path} {}", sub.get_name());
                if sub.get_about().is_none() {
                    missing.push(path.clone());
                }
                walk(sub, &path, missing);
            }
        }
        let mut missing = Vec::new();
        let mut command = Cli::command();
        command.build();
        walk(&command, "baton", &mut missing);
        assert!(missing.is_empty(), "no help for: {missing:?}");
    }
}
