//! `baton-bench delegation`: one run on a local embedded dev server, started in a temporary
//! directory, with everything on 127.0.0.1:
//! 1. the baseline, a bare Temporal parent→child→signal round trip (`baseline.rs`);
//! 2. delegation: N `TaskWorkflow`s, each delegating one question to a fast local A2A peer and
//!    completing after 2 model calls (the peer finishes within the create), through an agent
//!    watched by follow and one by push;
//! 3. the Temporal steps of one parent and its stand-in, counted from their histories;
//! 4. the cold start of `baton worker` against the running server;
//! 5. memory: the worker's RSS with sub-tasks parked in push mode, then in follow mode.
//!
//! Figures are reported as ratios against the baseline taken in the same run.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use baton_cli::child_process::{self, Target};
use baton_config::Settings;
use baton_proto::{TaskInput, TaskState, TaskView};
use baton_workflows::{RemoteTaskWorkflow, TaskWorkflow};
use futures::StreamExt;
use temporalio_client::errors::WorkflowGetResultError;
use temporalio_client::{
    Client, ClientOptions, WorkflowCancelOptions, WorkflowGetResultOptions, WorkflowQueryOptions,
    WorkflowStartOptions,
};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::baseline::BenchParentWorkflow;
use super::measure::{
    Latency, cpu_seconds, dynamic_config, load_average, per_second, round, rss_mib, stand_in_steps,
    steps_of, trimmed_rss_mib, wall_seconds,
};
use super::peer::{PARK_MARKER, PeerHandle, PeerProcess};
use super::report::{
    Batch, ColdStart, Machine, Output, ParkPhase, Ratios, Report, StepsSection, chart,
    print_report, print_text,
};
use super::worker::with_worker;
use baton_cli::temporal::EmbeddedServer;
use baton_tests::delegating_model::{ANSWER, delegating};
use baton_tests::fake_model::FakeModel;
use baton_tests::free_port;

/// The bench's task queue and agent id.
const TASK_QUEUE: &str = "bench";
/// The agent the delegation batch and the follow-mode parking use (`updates = "follow"`).
const FOLLOW_AGENT: &str = "peer";
/// The same peer with `updates = "auto"`: push, since its card offers push and `server.base_url`
/// is set.
const PUSH_AGENT: &str = "peer-push";
/// The longest one measured task may take.
const TASK_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest one sub-task may take to park before the parking is called stalled.
const PARK_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest a cancelled parent may take to end.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest the whole bench may run before it is stopped.
const RUN_LIMIT: Duration = Duration::from_secs(40 * 60);

#[derive(clap::Args, Debug, Clone)]
pub struct DelegationArgs {
    /// Tasks in each measured batch; the baseline runs the same number.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub parents: usize,
    /// Tasks in flight at once.
    #[arg(long, default_value_t = 10, value_name = "C")]
    pub concurrency: usize,
    /// Sub-tasks to park in each watch mode (push, then follow) for the memory figures; 0 skips
    /// the memory phase.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub parked: usize,
    /// The watch modes to park in, in order (an experiment on one mode skips the other).
    #[arg(long, value_delimiter = ',', default_values_t = [ParkMode::Push, ParkMode::Follow])]
    pub park_modes: Vec<ParkMode>,
    /// The `temporal` CLI that runs the dev server (default: `temporal` on PATH, as the
    /// settings' temporal.embedded.binary).
    #[arg(long, value_name = "PATH")]
    pub temporal_binary: Option<PathBuf>,
    /// Tasks run one at a time (baseline and delegation) for the unloaded latency; 0 skips them.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub sequential: usize,
    /// Cold starts of `baton worker` to time against the running server; 0 skips them.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub cold_starts: usize,
    /// Experiment: the worker's workflow cache size (default: `temporal.workflow_cache`'s
    /// default, 50). Parked memory is mostly this cache.
    #[arg(long, value_name = "N")]
    pub max_cached_workflows: Option<usize>,
    /// Serve the worker's metrics (the Temporal runtime's and Baton's), as `[metrics] bind`
    /// would, on a free port: compare with a run without to see what recording them costs.
    #[arg(long)]
    pub metrics: bool,
    #[command(flatten)]
    pub output: Output,
}

/// A watch mode to park sub-tasks in.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParkMode {
    Push,
    Follow,
}

impl std::fmt::Display for ParkMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ParkMode::Push => "push",
            ParkMode::Follow => "follow",
        })
    }
}

/// What every phase needs.
#[derive(Clone)]
struct Bench {
    client: Client,
    peer: PeerHandle,
    model: Arc<FakeModel>,
    args: DelegationArgs,
    temporal_address: String,
    server_pid: Option<u32>,
    dir: PathBuf,
}

pub async fn run(args: DelegationArgs) -> anyhow::Result<ExitCode> {
    if args.parents == 0 || args.concurrency == 0 {
        bail!("--parents and --concurrency must be at least 1");
    }
    if args.max_cached_workflows == Some(0) {
        bail!("--max-cached-workflows must be at least 1, as temporal.workflow_cache");
    }
    let started = Instant::now();
    let dir = bench_dir("baton-bench-")?;
    let load_at_start = load_average();

    let peer = PeerProcess::start().await?;
    let model = Arc::new(FakeModel::under_load(delegating).await);
    let server_started = Instant::now();
    let (server, client) = start_dev_server(dir.path(), args.temporal_binary.as_deref()).await?;
    let server_start = server_started.elapsed();
    let push_port = free_port();
    let mut settings = Settings::parse(
        &worker_toml(
            server.address(),
            peer.url(),
            &model.base_url(),
            Some(push_port),
            TASK_QUEUE,
            "bench",
        ),
        dir.path(),
        &|_| None,
    )?;
    if args.metrics {
        settings.metrics.bind = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
    }
    let bench = Bench {
        client: client.clone(),
        peer: peer.handle(),
        model: model.clone(),
        args: args.clone(),
        temporal_address: server.address().to_string(),
        server_pid: server.pid(),
        dir: dir.path().to_path_buf(),
    };
    let body = async move {
        tokio::time::timeout(RUN_LIMIT, measure(bench))
            .await
            .map_err(|_| anyhow::anyhow!("the bench ran past {RUN_LIMIT:?} and was stopped"))?
    };
    let outcome = with_worker(&settings, client, args.max_cached_workflows, body).await;
    peer.stop().await;
    server.stop().await;
    let mut report = outcome?;
    report.machine = Machine::read(load_at_start, load_average());
    report.dev_server_start_ms = round(server_start.as_secs_f64() * 1e3);
    report.total_s = round(started.elapsed().as_secs_f64());
    print_report(&report, &args.output, print_text, chart, report.failures())
}

/// Every phase, in order, while the worker runs.
async fn measure(bench: Bench) -> anyhow::Result<Report> {
    let args = &bench.args;
    let (n, c) = (args.parents, args.concurrency);
    progress("warming up");
    baseline_batch(&bench, "warm-base", n.min(10), c).await?;
    delegation_batch(&bench, "warm-deleg", FOLLOW_AGENT, n.min(5), c).await?;

    progress(&format!(
        "baseline: {n} parent→child→signal round trips, {c} at once"
    ));
    let baseline = baseline_batch(&bench, "base", n, c).await?;
    progress(&format!("delegation (follow): {n} tasks, {c} at once"));
    let cpu = CpuMark::take(&bench);
    let delegation = delegation_batch(&bench, "deleg", FOLLOW_AGENT, n, c).await?;
    let cpu_per_task = cpu.per_task(&bench, delegation.ok);
    progress(&format!("delegation (push): {n} tasks, {c} at once"));
    let delegation_push = delegation_batch(&bench, "push", PUSH_AGENT, n, c).await?;
    progress("baseline again, to see the drift");
    let baseline_after = baseline_batch(&bench, "base2", n, c).await?;
    let sequential = if args.sequential > 0 {
        let k = args.sequential;
        progress(&format!(
            "unloaded latency: {k} baselines, then {k} delegations, one at a time"
        ));
        Some((
            baseline_batch(&bench, "seq-base", k, 1).await?,
            delegation_batch(&bench, "seq-deleg", FOLLOW_AGENT, k, 1).await?,
        ))
    } else {
        None
    };

    progress("counting steps from history");
    let steps = StepsSection {
        baseline_parent: steps_of(&bench.client, &baseline.median_id).await?,
        baseline_child: steps_of(&bench.client, &format!("{}.1", baseline.median_id)).await?,
        delegation_parent: steps_of(&bench.client, &delegation.median_id).await?,
        delegation_stand_in: stand_in_steps(&bench.client, &delegation.median_id).await?,
        push_parent: steps_of(&bench.client, &delegation_push.median_id).await?,
        push_stand_in: stand_in_steps(&bench.client, &delegation_push.median_id).await?,
    };

    let cold_start = if args.cold_starts > 0 {
        progress(&format!(
            "cold start of `baton worker`, {} times",
            args.cold_starts
        ));
        Some(cold_starts(&bench, args.cold_starts).await?)
    } else {
        None
    };

    let mut parking = Vec::new();
    for mode in args.park_modes.iter().filter(|_| args.parked > 0) {
        progress(&format!(
            "memory: parking {} sub-tasks in {mode} mode",
            args.parked
        ));
        let agent = match mode {
            ParkMode::Push => PUSH_AGENT,
            ParkMode::Follow => FOLLOW_AGENT,
        };
        let phase = park_phase(&bench, &mode.to_string(), agent, args.parked, c).await?;
        parking.push(phase);
    }

    let ratios = Ratios::of(&baseline, &delegation, &delegation_push, &steps);
    Ok(Report {
        parents: n,
        concurrency: c,
        baseline,
        baseline_after,
        sequential,
        delegation,
        delegation_push,
        ratios,
        cpu_seconds_per_delegation: cpu_per_task,
        steps,
        cold_start,
        parking,
        machine: Machine::default(),
        dev_server_start_ms: 0.0,
        dev_server_tuning: dynamic_config(bench.server_pid),
        max_cached_workflows: args.max_cached_workflows,
        metrics: args.metrics,
        total_s: 0.0,
    })
}

pub(super) fn progress(text: &str) {
    eprintln!("bench: {text}");
}

/// One task of a batch: its latency, and its model turns when it is a delegation.
type TaskOutcome = (Duration, Option<u32>);

/// Runs `item(i)` for i in 0..n, `concurrency` at once; each returns its latency and a label.
async fn run_batch<F, Fut>(name: &str, prefix: &str, n: usize, concurrency: usize, item: F) -> Batch
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = anyhow::Result<TaskOutcome>>,
{
    let started = Instant::now();
    let results: Vec<(String, anyhow::Result<TaskOutcome>)> = futures::stream::iter(0..n)
        .map(|i| {
            let id = format!("{prefix}-{i}");
            let run = item(id.clone());
            async move { (id, run.await) }
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    let wall = started.elapsed();
    let mut samples = Vec::new();
    let mut turns: BTreeMap<u32, usize> = BTreeMap::new();
    let mut errors = Vec::new();
    let mut by_latency = Vec::new();
    for (id, result) in results {
        match result {
            Ok((latency, task_turns)) => {
                samples.push(latency);
                by_latency.push((latency, id));
                if let Some(t) = task_turns {
                    *turns.entry(t).or_default() += 1;
                }
            }
            Err(error) => errors.push(format!("{id}: {error:#}")),
        }
    }
    by_latency.sort();
    let median_id = by_latency
        .get(by_latency.len().saturating_sub(1) / 2)
        .map(|(_, id)| id.clone())
        .unwrap_or_default();
    Batch {
        name: name.to_string(),
        ok: samples.len(),
        failed: errors.len(),
        errors: errors.into_iter().take(5).collect(),
        wall_s: wall_seconds(wall),
        throughput_per_s: per_second(samples.len(), wall.as_secs_f64()),
        latency: Latency::of(&samples),
        turns,
        median_id,
    }
}

async fn baseline_batch(bench: &Bench, prefix: &str, n: usize, c: usize) -> anyhow::Result<Batch> {
    let batch = run_batch("baseline", prefix, n, c, |id| {
        let client = bench.client.clone();
        async move {
            let started = Instant::now();
            let handle = client
                .start_workflow(
                    BenchParentWorkflow::run,
                    (),
                    WorkflowStartOptions::new(TASK_QUEUE, id).build(),
                )
                .await?;
            tokio::time::timeout(
                TASK_TIMEOUT,
                handle.get_result(WorkflowGetResultOptions::default()),
            )
            .await
            .context("timed out")??;
            Ok((started.elapsed(), None))
        }
    })
    .await;
    check_batch(prefix, &batch)?;
    Ok(batch)
}

async fn delegation_batch(
    bench: &Bench,
    prefix: &str,
    agent: &str,
    n: usize,
    c: usize,
) -> anyhow::Result<Batch> {
    let name = format!("delegation via {agent}");
    let batch = run_batch(&name, prefix, n, c, |id| {
        let client = bench.client.clone();
        let input = task_input("bench:answer", agent);
        async move {
            let started = Instant::now();
            let handle = client
                .start_workflow(
                    TaskWorkflow::run,
                    baton_proto::TaskStart::from(input?),
                    WorkflowStartOptions::new(TASK_QUEUE, id).build(),
                )
                .await?;
            let view = tokio::time::timeout(
                TASK_TIMEOUT,
                handle.get_result(WorkflowGetResultOptions::default()),
            )
            .await
            .context("timed out")??;
            let elapsed = started.elapsed();
            if view.state != TaskState::Completed || view.last_answer.as_deref() != Some(ANSWER) {
                let rows: Vec<String> = view
                    .sub_tasks
                    .iter()
                    .map(|r| format!("{:?} {:?}", r.state, r.summary))
                    .collect();
                bail!(
                    "ended {:?} with answer {:?}, not COMPLETED with the model's answer \
                     (sub-tasks: {})",
                    view.state,
                    view.last_answer,
                    rows.join(", ")
                );
            }
            Ok((elapsed, Some(view.turns)))
        }
    })
    .await;
    check_batch(prefix, &batch)?;
    Ok(batch)
}

/// A batch where nothing succeeded has nothing to measure.
fn check_batch(prefix: &str, batch: &Batch) -> anyhow::Result<()> {
    if batch.ok == 0 {
        bail!(
            "every task of batch {prefix} failed; the first errors: {}",
            batch.errors.join("; ")
        );
    }
    Ok(())
}

fn task_input(marker: &str, agent: &str) -> anyhow::Result<TaskInput> {
    serde_json::from_value(serde_json::json!({
        "name": "bench",
        "goal": format!("{marker} via={agent} Ask the ledger what it says."),
    }))
    .context("building a TaskInput")
}

/// CPU seconds of the bench process, the peer and the dev server at one moment.
struct CpuMark {
    bench: Option<f64>,
    peer: Option<f64>,
    server: Option<f64>,
}

impl CpuMark {
    fn take(bench: &Bench) -> CpuMark {
        CpuMark {
            bench: cpu_seconds(None),
            peer: cpu_seconds(bench.peer.pid),
            server: cpu_seconds(bench.server_pid),
        }
    }

    /// CPU seconds per task since `self`, per process.
    fn per_task(&self, bench: &Bench, tasks: usize) -> BTreeMap<String, f64> {
        let now = CpuMark::take(bench);
        let mut out = BTreeMap::new();
        let tasks = tasks.max(1) as f64;
        for (name, before, after) in [
            (
                "worker process (worker + model + client)",
                self.bench,
                now.bench,
            ),
            ("peer process", self.peer, now.peer),
            ("dev server", self.server, now.server),
        ] {
            if let (Some(before), Some(after)) = (before, after) {
                out.insert(
                    name.to_string(),
                    round((after - before) / tasks * 1000.0) / 1000.0,
                );
            }
        }
        out
    }
}

/// Times `baton worker` from exec to its "worker ready" line, then stops it with SIGTERM half a
/// second later. Then probes the same number of workers with SIGTERM sent the moment they say
/// "worker ready", counting those that die of the signal instead of stopping gracefully.
async fn cold_starts(bench: &Bench, times: usize) -> anyhow::Result<ColdStart> {
    let config = bench.dir.join("cold-start.toml");
    std::fs::write(
        &config,
        worker_toml(
            &bench.temporal_address,
            &bench.peer.url,
            &bench.model.base_url(),
            None,
            "bench-cold-start",
            "cold-start",
        ),
    )?;
    let mut ready_ms = Vec::new();
    let mut stop_ms = Vec::new();
    let mut idle_rss = Vec::new();
    for _ in 0..times {
        let (child, ready) = start_worker_process(&config).await?;
        ready_ms.push(ready);
        tokio::time::sleep(Duration::from_millis(500)).await;
        if let Some(rss) = rss_mib(child.id()) {
            idle_rss.push(rss);
        }
        let (stopped, clean) = terminate(child).await;
        if !clean {
            bail!("baton worker did not stop cleanly on SIGTERM within 20 s");
        }
        stop_ms.push(stopped);
    }
    let mut unclean = 0;
    for _ in 0..times {
        let (child, _) = start_worker_process(&config).await?;
        if !terminate(child).await.1 {
            unclean += 1;
        }
    }
    Ok(ColdStart {
        runs: times,
        ready: Latency::of(&ready_ms).context("no cold start")?,
        stop: Latency::of(&stop_ms).context("no stop")?,
        idle_rss_mib: idle_rss.iter().copied().fold(0.0, f64::max),
        sigterm_at_ready_probes: times,
        sigterm_at_ready_unclean: unclean,
    })
}

/// `baton worker --config config`, as the benches run it: quiet, with a deployment secret of
/// its own, killed if dropped or if the bench dies; its stdout is the caller's to set.
pub(super) fn worker_command(config: &Path) -> anyhow::Result<tokio::process::Command> {
    let mut command = tokio::process::Command::new(super::baton_binary()?);
    command
        .args(["worker", "--config"])
        .arg(config)
        .env("RUST_LOG", "warn")
        .env(
            baton_config::DEPLOYMENT_SECRET_VARIABLE,
            baton_a2a::push::new_token(),
        )
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    child_process::dies_with_parent(&mut command);
    Ok(command)
}

/// Starts `baton worker --config config` and waits for its "worker ready" line.
async fn start_worker_process(config: &Path) -> anyhow::Result<(tokio::process::Child, Duration)> {
    let started = Instant::now();
    let mut child = worker_command(config)?
        .stdout(Stdio::piped())
        .spawn()
        .context("starting baton worker")?;
    let stdout = child.stdout.take().context("the worker's stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.starts_with("worker ready") {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    if !ready {
        child.kill().await.ok();
        bail!("baton worker did not print \"worker ready\" within 30 s");
    }
    let elapsed = started.elapsed();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, elapsed))
}

/// SIGTERM, then SIGKILL after 20 s; returns how long it took and whether it exited with
/// success.
pub(super) async fn terminate(mut child: tokio::process::Child) -> (Duration, bool) {
    let stopping = Instant::now();
    let status =
        child_process::terminate(&mut child, Target::Process, Duration::from_secs(20)).await;
    (stopping.elapsed(), status.is_some_and(|s| s.success()))
}

/// How one sub-task's parking went.
enum Parked {
    /// Parked, this long after its parent was started.
    Yes(Duration),
    /// It did not park within PARK_TIMEOUT: the phase stops starting new ones.
    Stalled,
    /// Not started, because the phase had stalled.
    Skipped,
    Failed(String),
}

/// Parks `count` sub-tasks through `agent` (push or follow watch), measures the worker's RSS
/// before and after, then cancels every parent and measures again.
async fn park_phase(
    bench: &Bench,
    mode: &str,
    agent: &str,
    count: usize,
    concurrency: usize,
) -> anyhow::Result<ParkPhase> {
    settle(bench).await;
    let rss_before = rss_mib(None).unwrap_or_default();
    let trimmed_before = trimmed_rss_mib().unwrap_or_default();
    let curve = Arc::new(std::sync::Mutex::new(vec![(0, round(rss_before))]));
    let stalled = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let prefix = format!("park-{mode}");
    let outcomes: Vec<(String, Parked)> = futures::stream::iter(0..count)
        .map(|i| {
            let id = format!("{prefix}-{i}");
            let stalled = stalled.clone();
            let curve = curve.clone();
            async move {
                let outcome = park_one(bench, &id, agent, &stalled).await;
                let done = i + 1;
                if done % 100 == 0 && !matches!(outcome, Parked::Skipped) {
                    progress(&format!("  {mode}: {done} done"));
                    if let (Ok(mut curve), Some(rss)) = (curve.lock(), rss_mib(None)) {
                        curve.push((done, round(rss)));
                    }
                }
                (id, outcome)
            }
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    let parking_s = started.elapsed().as_secs_f64();
    let parked = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Parked::Yes(_)))
        .count();
    let stalled_count = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Parked::Stalled))
        .count();
    let errors: Vec<String> = outcomes
        .iter()
        .filter_map(|(id, o)| match o {
            Parked::Failed(e) => Some(format!("{id}: {e}")),
            _ => None,
        })
        .collect();
    let park_times: Vec<(Duration, &String)> = outcomes
        .iter()
        .filter_map(|(id, o)| match o {
            Parked::Yes(t) => Some((*t, id)),
            _ => None,
        })
        .collect();
    let time_to_park = Latency::of(&park_times.iter().map(|(t, _)| *t).collect::<Vec<_>>());
    let mut by_time = park_times.clone();
    by_time.sort();
    let sample = by_time
        .get(by_time.len().saturating_sub(1) / 2)
        .map(|(_, id)| (*id).clone());
    settle(bench).await;
    let rss_parked = rss_mib(None).unwrap_or_default();
    let trimmed_parked = trimmed_rss_mib().unwrap_or_default();
    let sample_steps = match &sample {
        Some(id) => Some((
            steps_of(&bench.client, id).await?,
            steps_of(&bench.client, &format!("{id}.1")).await?,
        )),
        None => None,
    };
    let peer_stats = bench.peer.stats().await.ok();
    let peer_rss = rss_mib(bench.peer.pid);
    let server_rss = rss_mib(bench.server_pid);

    progress(&format!("  {mode}: cancelling every parent"));
    let cancel_started = Instant::now();
    let started_ids: Vec<String> = outcomes
        .iter()
        .filter(|(_, o)| !matches!(o, Parked::Skipped))
        .map(|(id, _)| id.clone())
        .collect();
    let cancel_results: Vec<bool> = futures::stream::iter(started_ids)
        .map(|id| cancel_one(bench, id))
        .buffer_unordered(concurrency * 4)
        .collect()
        .await;
    let cancel_s = cancel_started.elapsed().as_secs_f64();
    let canceled = cancel_results.iter().filter(|ok| **ok).count();
    settle(bench).await;
    let rss_after_cancel = rss_mib(None).unwrap_or_default();
    let trimmed_after_cancel = trimmed_rss_mib().unwrap_or_default();
    let growth = rss_parked - rss_before;
    let trimmed_growth = trimmed_parked - trimmed_before;
    let per_1000 = |growth: f64| {
        if parked > 0 {
            round(growth / parked as f64 * 1000.0)
        } else {
            0.0
        }
    };
    let rss_curve = curve.lock().map(|c| c.clone()).unwrap_or_default();
    Ok(ParkPhase {
        mode: mode.to_string(),
        requested: count,
        parked,
        stalled: stalled_count,
        failed: errors.len(),
        errors: errors.into_iter().take(5).collect(),
        parking_s: round(parking_s),
        time_to_park,
        sample_steps,
        rss_before_mib: round(rss_before),
        rss_parked_mib: round(rss_parked),
        rss_after_cancel_mib: round(rss_after_cancel),
        growth_mib: round(growth),
        growth_mib_per_1000: per_1000(growth),
        trimmed_before_mib: round(trimmed_before),
        trimmed_parked_mib: round(trimmed_parked),
        trimmed_after_cancel_mib: round(trimmed_after_cancel),
        trimmed_growth_mib_per_1000: per_1000(trimmed_growth),
        rss_curve,
        follows_open: peer_stats.as_ref().map(|s| s.subscriptions_open),
        peer: peer_stats,
        peer_rss_mib: peer_rss.map(round),
        dev_server_rss_mib: server_rss.map(round),
        canceled,
        cancel_s: round(cancel_s),
    })
}

async fn park_one(bench: &Bench, id: &str, agent: &str, stalled: &AtomicBool) -> Parked {
    if stalled.load(Ordering::Relaxed) {
        return Parked::Skipped;
    }
    let input = match task_input(PARK_MARKER, agent) {
        Ok(input) => input,
        Err(error) => return Parked::Failed(error.to_string()),
    };
    let started = Instant::now();
    if let Err(error) = bench
        .client
        .start_workflow(
            TaskWorkflow::run,
            baton_proto::TaskStart::from(input),
            WorkflowStartOptions::new(TASK_QUEUE, id).build(),
        )
        .await
    {
        return Parked::Failed(error.to_string());
    }
    let deadline = started + PARK_TIMEOUT;
    let parent = bench.client.get_workflow_handle::<TaskWorkflow>(id);
    let stand_in = bench
        .client
        .get_workflow_handle::<RemoteTaskWorkflow>(format!("{id}.1"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    loop {
        let view: Option<TaskView> = parent
            .query(TaskWorkflow::task, (), WorkflowQueryOptions::default())
            .await
            .ok();
        if let Some(view) = &view {
            if view.state.is_terminal() {
                return Parked::Failed(format!("the parent ended {:?}", view.state));
            }
            let heard = view
                .sub_tasks
                .first()
                .is_some_and(|row| row.state == TaskState::InputRequired);
            if heard {
                let watching = stand_in
                    .query(
                        RemoteTaskWorkflow::task,
                        (),
                        WorkflowQueryOptions::default(),
                    )
                    .await
                    .is_ok_and(|v| v.watch.is_some());
                if watching {
                    return Parked::Yes(started.elapsed());
                }
            }
        }
        if Instant::now() >= deadline {
            stalled.store(true, Ordering::Relaxed);
            return Parked::Stalled;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Cancels a parent and waits for it to end CANCELED (its stand-ins cancel their remote tasks
/// first).
async fn cancel_one(bench: &Bench, id: String) -> bool {
    let handle = bench.client.get_workflow_handle::<TaskWorkflow>(id);
    if handle
        .cancel(
            WorkflowCancelOptions::builder()
                .reason("bench done")
                .build(),
        )
        .await
        .is_err()
    {
        return false;
    }
    matches!(
        tokio::time::timeout(
            CANCEL_TIMEOUT,
            handle.get_result(WorkflowGetResultOptions::default())
        )
        .await,
        Ok(Err(WorkflowGetResultError::Cancelled { .. }))
    )
}

/// Waits until the model and the peer have been quiet for 2 s (at most 30 s), so RSS is read
/// with nothing in flight.
async fn settle(bench: &Bench) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut quiet = 0;
    let mut last = None;
    while quiet < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = (
            bench.model.request_count(),
            bench.peer.stats().await.ok().map(|s| {
                (
                    s.tasks_created,
                    s.gets,
                    s.subscriptions_opened,
                    s.tasks_canceled,
                    s.push_configs_deleted,
                )
            }),
        );
        if last.as_ref() == Some(&now) {
            quiet += 1;
        } else {
            quiet = 0;
        }
        last = Some(now);
    }
}

/// A temporary directory, named `<prefix>…`, for one run's files (the dev server's database,
/// configs); removed when dropped.
pub(super) fn bench_dir(prefix: &str) -> anyhow::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .context("creating the bench's temporary directory")
}

/// The bench's own dev server, in `dir` on free ports, and a client of its default namespace.
pub(super) async fn start_dev_server(
    dir: &Path,
    binary: Option<&Path>,
) -> anyhow::Result<(EmbeddedServer, Client)> {
    let settings = Settings::parse(&embedded_toml(dir, binary)?, dir, &|_| None)?;
    progress("starting the embedded Temporal dev server…");
    let (server, connection) = EmbeddedServer::start(&settings.temporal)
        .await
        .context("starting the embedded Temporal server")?;
    let client = Client::new(connection, ClientOptions::new("default").build())
        .context("creating the Temporal client")?;
    Ok((server, client))
}

/// A config of the bench's own dev server, in `dir`, on free ports.
fn embedded_toml(dir: &Path, binary: Option<&Path>) -> anyhow::Result<String> {
    Ok(format!(
        "[agent]\nid = \"bench\"\n{}",
        embedded_section(dir, binary)?
    ))
}

/// `[temporal.embedded]` with its database in `dir`, on free ports, run by `binary`.
pub(super) fn embedded_section(dir: &Path, binary: Option<&Path>) -> anyhow::Result<String> {
    let mut toml = String::from("[temporal.embedded]\n");
    if let Some(binary) = binary {
        // A relative path would be resolved against the temporary directory: make it absolute.
        let binary = if binary.components().count() > 1 {
            std::path::absolute(binary).context("resolving --temporal-binary")?
        } else {
            binary.to_path_buf()
        };
        toml.push_str(&format!(
            "binary = {}\n",
            serde_json::to_string(&binary.display().to_string())?
        ));
    }
    toml.push_str(&format!(
        "database = {}\nport = 0\nui_port = 0\n",
        serde_json::to_string(&dir.join("temporal.sqlite").display().to_string())?
    ));
    Ok(toml)
}

/// A worker config on the bench's server with the peer under two ids (follow and push) and the
/// bench model; `push_port` serves the push receiver as `server.base_url`.
fn worker_toml(
    temporal_address: &str,
    peer_url: &str,
    model_url: &str,
    push_port: Option<u16>,
    task_queue: &str,
    agent_id: &str,
) -> String {
    let server = match push_port {
        Some(port) => format!(
            "[server]\nbind = \"127.0.0.1:{port}\"\nbase_url = \"http://127.0.0.1:{port}\"\n"
        ),
        None => String::new(),
    };
    format!(
        "agents = [\n  {{ id = \"{FOLLOW_AGENT}\", url = \"{peer_url}\", updates = \"follow\" }},\n  \
         {{ id = \"{PUSH_AGENT}\", url = \"{peer_url}\" }},\n]\n\
         [agent]\nid = \"{agent_id}\"\n{server}\
         [temporal]\nmode = \"remote\"\naddress = \"{temporal_address}\"\ntls = false\n\
         task_queue = \"{task_queue}\"\n\
         [model]\nbase_url = \"{model_url}\"\nmodel = \"bench-model\"\ntimeout = \"30s\"\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worker_config_parses_with_both_watch_modes() {
        let toml = worker_toml(
            "127.0.0.1:7233",
            "http://127.0.0.1:9000",
            "http://127.0.0.1:9001/v1",
            Some(9002),
            "bench",
            "bench",
        );
        let settings = Settings::parse(&toml, Path::new("/tmp"), &|_| None).unwrap();
        assert_eq!(settings.agents.len(), 2);
        assert_eq!(settings.temporal.task_queue, "bench");
        assert!(!settings.temporal.tls);
        assert_eq!(
            settings.server.base_url.unwrap().as_str(),
            "http://127.0.0.1:9002/"
        );
    }

    #[test]
    fn the_embedded_config_uses_free_ports_and_an_absolute_binary() {
        let toml = embedded_toml(Path::new("/tmp/b"), Some(Path::new("bin/temporal"))).unwrap();
        let settings = Settings::parse(&toml, Path::new("/tmp/b"), &|_| None).unwrap();
        let embedded = settings.temporal.embedded;
        assert_eq!((embedded.port, embedded.ui_port), (0, 0));
        assert!(embedded.binary.is_absolute());
        assert!(!embedded.binary.starts_with("/tmp/b"));
        let default = embedded_toml(Path::new("/tmp/b"), None).unwrap();
        let settings = Settings::parse(&default, Path::new("/tmp/b"), &|_| None).unwrap();
        assert_eq!(settings.temporal.embedded.binary, PathBuf::from("temporal"));
    }

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: DelegationArgs,
    }

    #[tokio::test]
    async fn arguments_that_cannot_run_are_refused_before_anything_starts() {
        use clap::Parser;
        for (flags, error) in [
            (
                &["--parents", "0"][..],
                "--parents and --concurrency must be at least 1",
            ),
            (
                &["--max-cached-workflows", "0"][..],
                "--max-cached-workflows must be at least 1, as temporal.workflow_cache",
            ),
        ] {
            let cli =
                Cli::try_parse_from(std::iter::once("bench").chain(flags.iter().copied())).unwrap();
            let refused = run(cli.args).await.unwrap_err();
            assert_eq!(refused.to_string(), error);
        }
    }
}
