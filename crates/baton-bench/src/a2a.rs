//! `baton-bench a2a`: the whole path as a user drives it, measured the way the reference
//! tiny-harness 0.9.0 was measured beside Baton: an A2A client asks one question with a blocking
//! SendMessage over JSON-RPC; the agent's model delegates it to a fast A2A peer and answers
//! after the peer's result. `baton worker` runs as a process of its own on a dev server the bench
//! starts, so its CPU, RSS and cold start are its own.
//!
//! The reference needs Python 3.14, which this machine cannot install, so its figures are the
//! ones measured beside Baton on the same kind of 2-core machine, quoted in [`REFERENCE`]; every
//! figure of ours is printed beside its counterpart.

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};

use super::delegation::{
    bench_dir, free_port, progress, start_dev_server, terminate, worker_command,
};
use super::measure::{Latency, cpu_seconds, load_average, per_second, round, rss_mib, split};
use super::peer::PeerProcess;
use super::report::{Machine, print_report};
use baton_tests::delegating_model::{ANSWER, delegating};
use baton_tests::fake_model::FakeModel;

/// The longest one question may take to be answered.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest `baton worker` may take to serve its card.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// tiny-harness 0.9.0 through A2A, from the side-by-side measurement of issue 13 (ranges over
/// its runs): time to answer p50 in seconds, tasks per second at 10 in flight, CPU-seconds per
/// task (harness and its dev server), RSS in MB idle and after 200 tasks, cold start in seconds.
pub const REFERENCE: Reference = Reference {
    answer_p50_s: (0.76, 0.95),
    throughput_c10: (1.1, 1.4),
    cpu_s_per_task: (0.93, 1.44),
    rss_idle_mb: 216.0,
    rss_after_200_mb: 327.0,
    cold_start_s: (4.0, 7.3),
};

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Reference {
    answer_p50_s: (f64, f64),
    throughput_c10: (f64, f64),
    cpu_s_per_task: (f64, f64),
    rss_idle_mb: f64,
    rss_after_200_mb: f64,
    cold_start_s: (f64, f64),
}

#[derive(clap::Args, Debug, Clone)]
pub struct A2aArgs {
    /// Questions in each concurrent batch.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub tasks: usize,
    /// The batches' questions in flight at once, one batch each.
    #[arg(long, value_delimiter = ',', default_values_t = [10, 50], value_name = "C,…")]
    pub concurrency: Vec<usize>,
    /// Questions asked one at a time, for the time to answer.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub sequential: usize,
    /// Cold starts of `baton worker` to time, from exec to its card served.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub cold_starts: usize,
    /// The `temporal` CLI that runs the dev server (default: `temporal` on PATH).
    #[arg(long, value_name = "PATH")]
    pub temporal_binary: Option<PathBuf>,
    /// Print the figures as JSON on stdout instead of the text report.
    #[arg(long)]
    pub json: bool,
}

/// One batch of questions.
#[derive(Debug, Clone, Serialize)]
struct Batch {
    concurrency: usize,
    ok: usize,
    failed: usize,
    errors: Vec<String>,
    throughput_per_s: f64,
    latency: Option<Latency>,
    /// CPU-seconds per question: the dev server, the worker, and the peer.
    cpu_dev_server: Option<f64>,
    cpu_worker: Option<f64>,
    cpu_peer: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
struct A2aReport {
    cold_start_ms: Option<Latency>,
    /// The worker's RSS in MB (10^6 bytes, as the reference's): once it serves its card, after
    /// a warm-up, and after every question of the run.
    rss_ready_mb: Option<f64>,
    rss_idle_mb: Option<f64>,
    rss_after_mb: Option<f64>,
    questions: usize,
    one_at_a_time: Batch,
    batches: Vec<Batch>,
    reference: Reference,
    machine: Machine,
    total_s: f64,
}

pub async fn run(args: A2aArgs) -> anyhow::Result<ExitCode> {
    if args.tasks == 0 || args.concurrency.contains(&0) {
        bail!("--tasks and each --concurrency must be at least 1");
    }
    let started = Instant::now();
    let load_at_start = load_average();
    let dir = bench_dir("baton-bench-a2a-")?;
    let peer = PeerProcess::start().await?;
    let model = FakeModel::under_load(delegating).await;
    let (server, _client) = start_dev_server(dir.path(), args.temporal_binary.as_deref()).await?;
    let port = free_port()?;
    let config = dir.path().join("desk.toml");
    std::fs::write(
        &config,
        worker_toml(server.address(), peer.url(), &model.base_url(), port),
    )?;
    let peer_pid = peer.handle().pid;
    let outcome = measure(&args, &config, port, server.pid(), peer_pid).await;
    peer.stop().await;
    server.stop().await;
    let mut report = outcome?;
    report.machine = Machine::read(load_at_start, load_average());
    report.total_s = round(started.elapsed().as_secs_f64());
    let failed: usize = std::iter::once(&report.one_at_a_time)
        .chain(&report.batches)
        .map(|b| b.failed)
        .sum();
    print_report(&report, args.json, print_text, failed)
}

async fn measure(
    args: &A2aArgs,
    config: &Path,
    port: u16,
    dev_server: Option<u32>,
    peer: Option<u32>,
) -> anyhow::Result<A2aReport> {
    let url = format!("http://127.0.0.1:{port}/");
    let http = reqwest::Client::builder().timeout(ANSWER_TIMEOUT).build()?;
    let mut cold = Vec::new();
    for n in 0..args.cold_starts {
        progress(&format!("cold start {} of {}", n + 1, args.cold_starts));
        let (worker, took) = start_worker(config, &http, &url).await?;
        cold.push(took);
        terminate(worker).await;
    }
    progress("starting the measured worker");
    let (worker, _) = start_worker(config, &http, &url).await?;
    let pid = worker.id();
    let rss_ready_mb = rss_mib(pid).map(mib_to_mb);
    let asker = Asker { http, url };
    let mut asked = 0;
    for _ in 0..5 {
        asker.ask(asked).await?;
        asked += 1;
    }
    let rss_idle_mb = rss_mib(pid).map(mib_to_mb);

    progress(&format!("{} questions one at a time", args.sequential));
    let one_at_a_time = batch(
        &asker,
        &mut asked,
        args.sequential,
        1,
        [dev_server, pid, peer],
    )
    .await;
    let mut batches = Vec::new();
    for &concurrency in &args.concurrency {
        progress(&format!(
            "{} questions, {concurrency} in flight",
            args.tasks
        ));
        batches.push(
            batch(
                &asker,
                &mut asked,
                args.tasks,
                concurrency,
                [dev_server, pid, peer],
            )
            .await,
        );
    }
    let rss_after_mb = rss_mib(pid).map(mib_to_mb);
    terminate(worker).await;
    Ok(A2aReport {
        cold_start_ms: Latency::of(&cold),
        rss_ready_mb,
        rss_idle_mb,
        rss_after_mb,
        questions: asked,
        one_at_a_time,
        batches,
        reference: REFERENCE,
        machine: Machine::read(None, None),
        total_s: 0.0,
    })
}

fn mib_to_mb(mib: f64) -> f64 {
    round(mib * 1.048_576)
}

/// Starts `baton worker` and waits for its card; returns it and the time from exec to the card.
async fn start_worker(
    config: &Path,
    http: &reqwest::Client,
    url: &str,
) -> anyhow::Result<(tokio::process::Child, Duration)> {
    let card = format!("{url}.well-known/agent-card.json");
    let started = Instant::now();
    let worker = worker_command(config)?
        .stdout(Stdio::null())
        .spawn()
        .context("starting baton worker")?;
    // The card is served once the gateway listens: asked for every few milliseconds until then.
    while started.elapsed() < START_TIMEOUT {
        let served = http
            .get(&card)
            .timeout(Duration::from_secs(1))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if served {
            return Ok((worker, started.elapsed()));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    bail!("baton worker did not serve its card within {START_TIMEOUT:?}")
}

/// Asks the gateway questions, each a new task.
struct Asker {
    http: reqwest::Client,
    url: String,
}

impl Asker {
    /// A blocking SendMessage whose answer must be the model's, after the delegation.
    async fn ask(&self, n: usize) -> anyhow::Result<Duration> {
        let sent = Instant::now();
        let body = json!({
            "jsonrpc": "2.0", "id": n, "method": "SendMessage",
            "params": {"message": {
                "messageId": format!("question-{n}"),
                "role": "ROLE_USER",
                "parts": [{"text": format!("Question {n}: is the ledger balanced? via=peer")}],
            }},
        });
        let answer: Value = self
            .http
            .post(&self.url)
            .header("A2A-Version", "1.0")
            .header("X-Participant-Id", "bench-client")
            .json(&body)
            .send()
            .await?
            .json()
            .await?;
        let took = sent.elapsed();
        let task = &answer["result"]["task"];
        if !task.to_string().contains(ANSWER) {
            bail!("question {n} was not answered by the model after the delegation: {answer}");
        }
        Ok(took)
    }
}

/// `n` questions, `concurrency` at once, with the CPU each process spent on them.
async fn batch(
    asker: &Asker,
    asked: &mut usize,
    n: usize,
    concurrency: usize,
    [dev_server, worker, peer]: [Option<u32>; 3],
) -> Batch {
    let cpu = || {
        [
            cpu_seconds(dev_server),
            cpu_seconds(worker),
            cpu_seconds(peer),
        ]
    };
    let before = cpu();
    let started = Instant::now();
    let first = *asked;
    let results: Vec<anyhow::Result<Duration>> = futures::stream::iter(first..first + n)
        .map(|i| asker.ask(i))
        .buffer_unordered(concurrency)
        .collect()
        .await;
    *asked += n;
    let wall = started.elapsed().as_secs_f64();
    let after = cpu();
    let per_question = |i: usize| {
        before[i]
            .zip(after[i])
            .map(|(b, a)| round((a - b) / n as f64 * 1000.0) / 1000.0)
    };
    let (samples, errors) = split(results);
    Batch {
        concurrency,
        ok: samples.len(),
        failed: errors.len(),
        errors: errors.into_iter().take(5).collect(),
        throughput_per_s: per_second(samples.len(), wall),
        latency: Latency::of(&samples),
        cpu_dev_server: per_question(0),
        cpu_worker: per_question(1),
        cpu_peer: per_question(2),
    }
}

fn print_text(report: &A2aReport) {
    let r = &report.reference;
    let range = |(low, high): (f64, f64)| format!("{low}–{high}");
    let show = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v}"));
    println!(
        "A2A bench: blocking SendMessage over JSON-RPC to `baton worker`, whose model delegates \
         each question to a fast A2A peer and answers after its result; {} questions in all",
        report.questions
    );
    println!();
    println!("{:<44} {:>16} {:>22}", "", "Baton", "tiny-harness 0.9.0");
    let p50 = report
        .one_at_a_time
        .latency
        .as_ref()
        .map(|l| l.p50_ms / 1e3);
    println!(
        "{:<44} {:>16} {:>22}",
        "time to answer, one at a time, p50 (s)",
        show(p50.map(|s| round(s * 1e3) / 1e3)),
        range(r.answer_p50_s)
    );
    for b in &report.batches {
        let reference = if b.concurrency == 10 {
            range(r.throughput_c10)
        } else {
            "-".to_string()
        };
        println!(
            "{:<44} {:>16} {:>22}",
            format!("throughput, {} in flight (tasks/s)", b.concurrency),
            b.throughput_per_s,
            reference
        );
        let harness = b
            .cpu_dev_server
            .zip(b.cpu_worker)
            .map(|(d, w)| round((d + w) * 1e3) / 1e3);
        println!(
            "{:<44} {:>16} {:>22}",
            format!(
                "  CPU-s per task, worker + dev server (C={})",
                b.concurrency
            ),
            format!(
                "{} ({} + {})",
                show(harness),
                show(b.cpu_worker),
                show(b.cpu_dev_server)
            ),
            if b.concurrency == 10 {
                range(r.cpu_s_per_task)
            } else {
                "-".into()
            }
        );
        for error in &b.errors {
            println!("    error: {error}");
        }
    }
    println!(
        "{:<44} {:>16} {:>22}",
        "RSS of the worker, ready, no task yet (MB)",
        show(report.rss_ready_mb),
        r.rss_idle_mb
    );
    println!(
        "{:<44} {:>16} {:>22}",
        "RSS of the worker, idle after 5 tasks (MB)",
        show(report.rss_idle_mb),
        r.rss_idle_mb
    );
    println!(
        "{:<44} {:>16} {:>22}",
        format!("RSS after {} tasks (MB)", report.questions),
        show(report.rss_after_mb),
        format!("{} (after 200)", r.rss_after_200_mb)
    );
    println!(
        "{:<44} {:>16} {:>22}",
        "cold start, exec to card served, p50 (s)",
        show(report.cold_start_ms.as_ref().map(|l| round(l.p50_ms) / 1e3)),
        range(r.cold_start_s)
    );
    for error in &report.one_at_a_time.errors {
        println!("    error: {error}");
    }
    println!();
    report.machine.print_line(report.total_s);
}

/// `baton worker`'s config: the agent `desk` with its gateway on `port`, the bench peer as
/// `peer` (followed, since the peer ends its tasks within the create), and no rate limit.
fn worker_toml(temporal_address: &str, peer_url: &str, model_url: &str, port: u16) -> String {
    format!(
        "agents = [{{ id = \"peer\", url = \"{peer_url}\", updates = \"follow\" }}]\n\
         [agent]\nid = \"desk\"\n\
         [server]\nbind = \"127.0.0.1:{port}\"\nbase_url = \"http://127.0.0.1:{port}\"\n\
         rate_limit_per_minute = 0\nmax_concurrent_requests = 4096\n\
         [temporal]\nmode = \"remote\"\naddress = \"{temporal_address}\"\ntls = false\n\
         [model]\nbase_url = \"{model_url}\"\nmodel = \"bench-model\"\ntimeout = \"30s\"\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_config::Settings;

    #[test]
    fn the_worker_config_serves_the_gateway_and_knows_the_peer() {
        let toml = worker_toml(
            "127.0.0.1:7233",
            "http://127.0.0.1:9000",
            "http://127.0.0.1:9001/v1",
            9002,
        );
        let settings = Settings::parse(&toml, Path::new("/tmp"), &|_| None).unwrap();
        assert_eq!(settings.agents.len(), 1);
        assert_eq!(settings.agents[0].id, "peer");
        assert_eq!(settings.server.rate_limit_per_minute, 0);
        assert_eq!(settings.temporal.task_queue, "desk");
    }
}
