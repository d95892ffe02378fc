//! `baton bench`: benchmarks whose figures are ratios against a baseline measured in the same
//! run, never absolute claims from timed tests (DESIGN.md, "Rules of the house").
//!
//! - `baton bench delegation`: delegation latency, throughput, Temporal steps and parked memory,
//!   against a bare Temporal parent→child→signal round trip (docs/performance.md).
//! - `baton bench gateway`: GetTask and SendMessage through the gateway, against the Python
//!   a2a-sdk's in-memory server, and what quiet streams cost.
//! - `baton bench a2a`: a delegation through A2A end to end, beside the reference's figures.

mod a2a;
mod baseline;
mod child;
mod delegation;
mod gateway;
mod measure;
mod model;
mod peer;
mod quiet_streams;
mod report;
mod worker;

use std::process::ExitCode;

pub use a2a::A2aArgs;
pub use baseline::{BenchActivities, BenchChildWorkflow, BenchParentWorkflow};
pub use delegation::DelegationArgs;
pub use gateway::GatewayArgs;
pub use peer::PeerArgs;

#[derive(clap::Subcommand, Debug)]
pub enum BenchCommand {
    /// Delegation latency, throughput, steps and parked memory, as ratios against a bare
    /// Temporal round trip, on a local dev server the bench starts itself.
    Delegation(DelegationArgs),
    /// GetTask and SendMessage (returnImmediately) latency and throughput through the gateway,
    /// as ratios against the Python a2a-sdk's in-memory server in the same run.
    Gateway(GatewayArgs),
    /// The whole path through A2A, as the reference tiny-harness was measured: blocking
    /// SendMessages to `baton worker`, whose model delegates each to a fast A2A peer; time to
    /// answer, throughput, CPU, RSS and cold start beside the reference's figures.
    A2a(A2aArgs),
    /// The bench's fast A2A peer (started by `bench delegation` as a child process).
    #[command(hide = true)]
    Peer(PeerArgs),
}

pub async fn run(command: BenchCommand) -> anyhow::Result<ExitCode> {
    match command {
        BenchCommand::Delegation(args) => delegation::run(args).await,
        BenchCommand::Gateway(args) => gateway::run(args).await,
        BenchCommand::A2a(args) => a2a::run(args).await,
        BenchCommand::Peer(args) => peer::serve(args).await,
    }
}
