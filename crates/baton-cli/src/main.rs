use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Baton: a durable agent harness on Temporal that delegates to other A2A agents.
#[derive(Parser)]
#[command(name = "baton", version, about)]
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
    /// Benchmarks, reported as ratios against a baseline measured in the same run.
    Bench {
        #[command(subcommand)]
        command: baton_cli::bench::BenchCommand,
    },
    /// Serve Baton as an A2A 1.0 agent on [server] bind, with Temporal behind every call.
    Gateway {
        #[arg(long, short, value_name = "FILE")]
        config: PathBuf,
    },
    /// Run a Temporal worker for TaskWorkflow, RemoteTaskWorkflow and their activities.
    Worker {
        #[arg(long, short, value_name = "FILE")]
        config: PathBuf,
    },
    /// Run every agent of the given configs in one process: workers, gateways, and one embedded
    /// Temporal dev server for the agents in embedded mode. Ctrl-C stops everything.
    Up {
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
}

#[derive(Subcommand)]
enum AgentsCommand {
    /// Fetch and validate every agent's card, then print the roster the model will see.
    Check {
        #[arg(long, short, value_name = "FILE")]
        config: PathBuf,
    },
}

#[derive(Subcommand)]
enum TemporalCommand {
    /// Start `temporal server start-dev` with the config's [temporal.embedded] settings.
    Serve {
        #[arg(long, short, value_name = "FILE")]
        config: PathBuf,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    baton_cli::logging::init();
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Agents {
            command: AgentsCommand::Check { config },
        } => baton_cli::agents_check::run(&config).await,
        Command::Worker { config } => baton_cli::worker::run(&config).await,
        Command::Bench { command } => baton_cli::bench::run(command).await,
        Command::Gateway { config } => baton_cli::gateway::run(&config).await,
        Command::Up { configs } => baton_cli::up::run(&configs).await,
        Command::Replay(args) => baton_cli::replay::run(&args).await,
        Command::Task { command } => baton_cli::task_cli::run(command).await,
        Command::Temporal {
            command: TemporalCommand::Serve { config },
        } => baton_cli::temporal_serve::run(&config).await,
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
