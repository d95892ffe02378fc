//! `baton-bench`: benchmarks whose figures are ratios against a baseline measured in the same
//! run, never absolute claims from timed tests, which differ from machine to machine. They live
//! apart from the product: their fake model and fast A2A peer come from the test kit
//! (`baton-tests`), and they run the `baton` binary built beside this one.
//!
//! - `baton-bench delegation`: delegation latency, throughput, Temporal steps and parked memory,
//!   against a bare Temporal parent→child→signal round trip (docs/performance.md).
//! - `baton-bench gateway`: GetTask, ListTasks and SendMessage through the gateway, against the Python
//!   a2a-sdk's in-memory server, and what quiet streams cost.
//! - `baton-bench a2a`: a delegation through A2A end to end, beside the reference's figures.

mod a2a;
mod baseline;
mod child;
mod delegation;
mod ended_tasks;
mod gateway;
mod measure;
mod peer;
mod plot;
mod quiet_streams;
mod report;
mod subscribe;
mod worker;
mod workflow_tasks;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use a2a::A2aArgs;
use delegation::DelegationArgs;
use gateway::GatewayArgs;
use peer::PeerArgs;

/// Benchmarks of Baton, reported as ratios against a baseline measured in the same run.
#[derive(Parser, Debug)]
#[command(name = "baton-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: BenchCommand,
}

#[derive(clap::Subcommand, Debug)]
enum BenchCommand {
    /// Delegation latency, throughput, steps and parked memory, as ratios against a bare
    /// Temporal round trip, on a local dev server the bench starts itself.
    Delegation(DelegationArgs),
    /// GetTask, ListTasks and SendMessage (returnImmediately) latency and throughput through the gateway,
    /// as ratios against the Python a2a-sdk's in-memory server in the same run.
    Gateway(GatewayArgs),
    /// The whole path through A2A, as the reference tiny-harness was measured: blocking
    /// SendMessages to `baton worker`, whose model delegates each to a fast A2A peer; time to
    /// answer, throughput, CPU, RSS and cold start beside the reference's figures.
    A2a(A2aArgs),
    /// The bench's fast A2A peer (started by `delegation` as a child process).
    #[command(hide = true)]
    Peer(PeerArgs),
}

/// The variable that names the `baton` binary the benches run, when it is not beside this one.
const BATON_BIN_VARIABLE: &str = "BATON_BIN";

/// The `baton` binary: `$BATON_BIN`, else the one built beside `baton-bench`.
fn baton_binary() -> anyhow::Result<PathBuf> {
    let binary = match std::env::var_os(BATON_BIN_VARIABLE) {
        Some(path) => PathBuf::from(path),
        None => std::env::current_exe()
            .context("finding the baton-bench binary")?
            .with_file_name("baton"),
    };
    anyhow::ensure!(
        binary.is_file(),
        "the benches run the `baton` binary, and there is none at {}: build both with \
         `cargo build --release -p baton-cli -p baton-bench`, or set {BATON_BIN_VARIABLE}",
        binary.display()
    );
    Ok(binary)
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command).await {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: BenchCommand) -> anyhow::Result<ExitCode> {
    match command {
        BenchCommand::Delegation(args) => delegation::run(args).await,
        BenchCommand::Gateway(args) => gateway::run(args).await,
        BenchCommand::A2a(args) => a2a::run(args).await,
        BenchCommand::Peer(args) => peer::serve(args).await,
    }
}
