//! `baton-bench a2a`: the whole path as a user drives it, measured the way the reference
//! tiny-harness 0.9.0 was measured beside Baton: an A2A client asks one question with a blocking
//! SendMessage over JSON-RPC; the agent's model delegates it to a fast A2A peer and answers
//! after the peer's result. `baton worker` runs as a process of its own on a dev server the bench
//! starts, so its CPU, RSS and cold start are its own.
//!
//! With `--reference PATH` (a command that runs tiny-harness 0.9.0's CLI, which needs Python
//! 3.14: `scripts/reference.sh` makes one), the reference is measured the same way in the same
//! run, on a dev server of its own, after Baton; without it, its figures are the ones measured
//! beside Baton for issue 13, quoted in [`REFERENCE`]. Every figure of ours is printed beside
//! its counterpart.

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};

use super::delegation::{
    bench_dir, embedded_section, progress, start_dev_server, terminate, worker_command,
};
use super::measure::{Latency, cpu_seconds, load_average, per_second, round, rss_mib, split};
use super::peer::PeerProcess;
use super::plot::{Chart, Group, Panel};
use super::report::{Machine, Output, print_report};
use super::subscribe;
use super::workflow_tasks::{self, WorkflowTasks};
use baton_cli::child_process::dies_with_parent;
use baton_tests::delegating_model::{ANSWER, delegating};
use baton_tests::fake_model::FakeModel;
use baton_tests::free_port;

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
    /// Whether Baton's tasks carry its search attributes, as they do by default on its embedded
    /// dev server (the bench's server has them registered); `false` measures what they cost.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub search_attributes: bool,
    /// A command that runs the reference's CLI (`tiny-harness`, 0.9.0): the reference is then
    /// measured the same way, after Baton, instead of its figures being quoted.
    #[arg(long, value_name = "PATH")]
    pub reference: Option<PathBuf>,
    #[command(flatten)]
    pub output: Output,
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

impl Batch {
    /// CPU-seconds per question of the harness and its dev server.
    fn cpu_per_task(&self) -> Option<f64> {
        self.cpu_dev_server
            .zip(self.cpu_worker)
            .map(|(d, w)| round((d + w) * 1e3) / 1e3)
    }
}

/// How long reading every history of a run may take (about a second for 225 tasks).
const HISTORIES_TIMEOUT: Duration = Duration::from_secs(60);

/// The figures of one system, Baton or the reference.
#[derive(Debug, Clone, Serialize)]
struct Measured {
    cold_start_ms: Option<Latency>,
    /// Baton only: the cold start with its own embedded dev server, on a new database.
    cold_start_embedded_ms: Option<Latency>,
    /// The worker's RSS in MB (10^6 bytes, as the reference's): once it serves its card, after
    /// a warm-up, and after every question of the run.
    rss_ready_mb: Option<f64>,
    rss_idle_mb: Option<f64>,
    rss_after_mb: Option<f64>,
    questions: usize,
    one_at_a_time: Batch,
    batches: Vec<Batch>,
    /// Every workflow task of the run, read from the dev server's histories at its end.
    workflow_tasks: Option<WorkflowTasks>,
}

impl Measured {
    fn failed(&self) -> usize {
        std::iter::once(&self.one_at_a_time)
            .chain(&self.batches)
            .map(|b| b.failed)
            .sum()
    }
}

#[derive(Debug, Clone, Serialize)]
struct A2aReport {
    baton: Measured,
    /// The reference measured in this run, with `--reference`.
    reference: Option<Measured>,
    /// The reference's figures from issue 13, printed when it was not measured.
    quoted: Reference,
    machine: Machine,
    total_s: f64,
}

/// The system a run measures: how its worker starts, and what it is called.
enum System {
    Baton,
    /// tiny-harness, started by this command.
    Reference(PathBuf),
}

impl System {
    fn name(&self) -> &'static str {
        match self {
            System::Baton => "baton worker",
            System::Reference(_) => "tiny-harness",
        }
    }

    /// The command that serves the agent of `config` with its worker.
    fn command(&self, config: &Path) -> anyhow::Result<tokio::process::Command> {
        match self {
            System::Baton => worker_command(config),
            System::Reference(cli) => {
                let mut command = tokio::process::Command::new(cli);
                command
                    .arg("--config")
                    .arg(config)
                    .args(["serve", "--with-worker"])
                    // Its remote mode asks for a key; the dev server takes none.
                    .env("TEMPORAL_API_KEY", "unused")
                    .stdin(Stdio::null())
                    .stderr(Stdio::null())
                    .kill_on_drop(true);
                dies_with_parent(&mut command);
                Ok(command)
            }
        }
    }
}

pub async fn run(args: A2aArgs) -> anyhow::Result<ExitCode> {
    if args.tasks == 0 || args.concurrency.contains(&0) {
        bail!("--tasks and each --concurrency must be at least 1");
    }
    let started = Instant::now();
    let load_at_start = load_average();
    let peer = PeerProcess::start().await?;
    let model = FakeModel::under_load(delegating).await;
    let model_url = model.base_url();
    let mut systems = vec![System::Baton];
    systems.extend(args.reference.clone().map(System::Reference));
    let mut measured = Vec::new();
    for system in &systems {
        let outcome = run_system(&args, system, peer.url(), &model_url, peer.handle().pid);
        match outcome.await {
            Ok(figures) => measured.push(figures),
            Err(e) => {
                peer.stop().await;
                return Err(e.context(format!("measuring {}", system.name())));
            }
        }
    }
    peer.stop().await;
    let mut measured = measured.into_iter();
    let baton = measured.next().context("Baton was measured")?;
    let reference = measured.next();
    let failed = baton.failed() + reference.as_ref().map_or(0, Measured::failed);
    let report = A2aReport {
        baton,
        reference,
        quoted: REFERENCE,
        machine: Machine::read(load_at_start, load_average()),
        total_s: round(started.elapsed().as_secs_f64()),
    };
    print_report(&report, &args.output, print_text, chart, failed)
}

/// One system's run, on a dev server of its own.
async fn run_system(
    args: &A2aArgs,
    system: &System,
    peer_url: &str,
    model_url: &str,
    peer: Option<u32>,
) -> anyhow::Result<Measured> {
    let dir = bench_dir("baton-bench-a2a-")?;
    let (server, client) = start_dev_server(dir.path(), args.temporal_binary.as_deref()).await?;
    let port = free_port();
    let config = dir.path().join("desk.toml");
    let toml = match system {
        System::Baton => {
            let temporal = remote_section(server.address(), args.search_attributes);
            worker_toml(&temporal, peer_url, model_url, port)
        }
        System::Reference(_) => {
            reference_toml(server.address(), peer_url, model_url, port, dir.path())
        }
    };
    std::fs::write(&config, toml)?;
    let mut outcome = measure(args, system, &config, port, server.pid(), peer).await;
    if let Ok(measured) = &mut outcome {
        progress(&format!(
            "{}: reading every workflow history",
            system.name()
        ));
        match tokio::time::timeout(HISTORIES_TIMEOUT, workflow_tasks::audit(&client)).await {
            Ok(Ok(tasks)) => measured.workflow_tasks = Some(tasks),
            Ok(Err(error)) => progress(&format!("the histories could not be read: {error:#}")),
            Err(_) => progress(&format!(
                "the histories were not read within {}s",
                HISTORIES_TIMEOUT.as_secs()
            )),
        }
    }
    server.stop().await;
    let mut measured = outcome?;
    if let System::Baton = system {
        measured.cold_start_embedded_ms =
            Latency::of(&embedded_cold_starts(args, peer_url, model_url).await?);
    }
    Ok(measured)
}

/// Cold starts of `baton worker` with its own embedded dev server, each on a new database, from
/// exec to its card served: what `baton up` from nothing costs.
async fn embedded_cold_starts(
    args: &A2aArgs,
    peer_url: &str,
    model_url: &str,
) -> anyhow::Result<Vec<Duration>> {
    let http = reqwest::Client::new();
    let mut cold = Vec::new();
    for n in 0..args.cold_starts {
        progress(&format!(
            "baton worker: cold start with its embedded dev server, {} of {}",
            n + 1,
            args.cold_starts
        ));
        let dir = bench_dir("baton-bench-cold-")?;
        let port = free_port();
        let config = dir.path().join("desk.toml");
        let temporal = embedded_section(dir.path(), args.temporal_binary.as_deref())?;
        std::fs::write(&config, worker_toml(&temporal, peer_url, model_url, port))?;
        let url = format!("http://127.0.0.1:{port}/");
        let (worker, took) = start_worker(&System::Baton, &config, &http, &url).await?;
        cold.push(took);
        terminate(worker).await;
    }
    Ok(cold)
}

async fn measure(
    args: &A2aArgs,
    system: &System,
    config: &Path,
    port: u16,
    dev_server: Option<u32>,
    peer: Option<u32>,
) -> anyhow::Result<Measured> {
    let url = format!("http://127.0.0.1:{port}/");
    let http = reqwest::Client::builder().timeout(ANSWER_TIMEOUT).build()?;
    let mut cold = Vec::new();
    for n in 0..args.cold_starts {
        progress(&format!(
            "{}: cold start {} of {}",
            system.name(),
            n + 1,
            args.cold_starts
        ));
        let (worker, took) = start_worker(system, config, &http, &url).await?;
        cold.push(took);
        terminate(worker).await;
    }
    progress(&format!("{}: starting the measured worker", system.name()));
    let (worker, _) = start_worker(system, config, &http, &url).await?;
    let pid = worker.id();
    let rss_ready_mb = rss_mib(pid).map(mib_to_mb);
    let asker = Asker { http, url };
    let mut asked = 0;
    for _ in 0..5 {
        asker.ask(asked).await?;
        asked += 1;
    }
    let rss_idle_mb = rss_mib(pid).map(mib_to_mb);

    progress(&format!(
        "{}: {} questions one at a time",
        system.name(),
        args.sequential
    ));
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
            "{}: {} questions, {concurrency} in flight",
            system.name(),
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
    Ok(Measured {
        cold_start_ms: Latency::of(&cold),
        cold_start_embedded_ms: None,
        rss_ready_mb,
        rss_idle_mb,
        rss_after_mb,
        questions: asked,
        one_at_a_time,
        batches,
        workflow_tasks: None,
    })
}

fn mib_to_mb(mib: f64) -> f64 {
    round(mib * 1.048_576)
}

/// Starts the system's worker and waits for its card; returns it and the time from exec to the
/// card.
async fn start_worker(
    system: &System,
    config: &Path,
    http: &reqwest::Client,
    url: &str,
) -> anyhow::Result<(tokio::process::Child, Duration)> {
    let card = format!("{url}.well-known/agent-card.json");
    let started = Instant::now();
    let worker = system
        .command(config)?
        .stdout(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", system.name()))?;
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
    bail!(
        "{} did not serve its card within {START_TIMEOUT:?}",
        system.name()
    )
}

/// Asks the gateway questions, each a new task.
struct Asker {
    http: reqwest::Client,
    url: String,
}

impl Asker {
    /// A blocking SendMessage whose answer must be the model's, after the delegation; the time
    /// until the answer is seen. A task that returns from the blocking call before its answer
    /// (the reference parks its conversation while its sub-task runs) is followed with
    /// SubscribeToTask until the answer shows.
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
        let task = &answer["result"]["task"];
        if !task.to_string().contains(ANSWER) {
            let Some(task_id) = task["id"].as_str() else {
                bail!("question {n} got no task: {answer}");
            };
            self.follow(task_id)
                .await
                .with_context(|| format!("question {n}, answered first with {answer}"))?;
        }
        Ok(sent.elapsed())
    }

    /// Follows the task with SubscribeToTask until the model's answer shows.
    async fn follow(&self, task_id: &str) -> anyhow::Result<()> {
        let followed = subscribe::until_shown(
            &self.http,
            &self.url,
            "bench-client",
            task_id,
            ANSWER,
            ANSWER_TIMEOUT,
        );
        if let Err(seen) = followed.await? {
            bail!(
                "the task's stream ended without the model's answer after the delegation: {seen}"
            );
        }
        Ok(())
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

/// The A2A bench drawn: Baton beside the reference, measured in this run (`--reference`) or, when
/// not, at the better end of the figures issue 13 quotes.
fn chart(report: &A2aReport) -> Chart {
    let measured = report.reference.as_ref();
    let q = &report.quoted;
    let answer_s = |m: &Measured| m.one_at_a_time.latency.as_ref().map(|l| l.p50_ms / 1e3);
    let throughput = |m: &Measured, c: usize| {
        m.batches
            .iter()
            .find(|b| b.concurrency == c)
            .map(|b| b.throughput_per_s)
    };
    let reference_throughput = |c: usize| match measured {
        Some(r) => throughput(r, c),
        None => (c == 10).then_some(q.throughput_c10.1),
    };
    Chart {
        title: format!(
            "baton-bench a2a: {} questions through A2A, Baton beside tiny-harness 0.9.0",
            report.baton.questions
        ),
        series: vec![
            "Baton".into(),
            match measured {
                Some(_) => "tiny-harness 0.9.0, measured in this run".into(),
                None => "tiny-harness 0.9.0, issue 13's figures (its better end)".into(),
            },
        ],
        panels: vec![
            Panel {
                title: "time to answer p50, one at a time".into(),
                unit: "s".into(),
                groups: vec![Group::new(
                    "one question",
                    vec![
                        answer_s(&report.baton),
                        measured.map_or(Some(q.answer_p50_s.0), answer_s),
                    ],
                )],
            },
            Panel {
                title: "throughput".into(),
                unit: "tasks/s".into(),
                groups: report
                    .baton
                    .batches
                    .iter()
                    .map(|b| {
                        Group::new(
                            format!("{} at once", b.concurrency),
                            vec![
                                Some(b.throughput_per_s),
                                reference_throughput(b.concurrency),
                            ],
                        )
                    })
                    .collect(),
            },
            Panel {
                title: "worker RSS".into(),
                unit: "MB".into(),
                groups: vec![
                    Group::new(
                        "ready",
                        vec![
                            report.baton.rss_ready_mb,
                            measured.and_then(|r| r.rss_ready_mb),
                        ],
                    ),
                    Group::new(
                        "idle",
                        vec![
                            report.baton.rss_idle_mb,
                            measured.map_or(Some(q.rss_idle_mb), |r| r.rss_idle_mb),
                        ],
                    ),
                    Group::new(
                        "after the run",
                        vec![
                            report.baton.rss_after_mb,
                            measured.and_then(|r| r.rss_after_mb),
                        ],
                    ),
                ],
            },
        ],
    }
}

fn print_text(report: &A2aReport) {
    let q = &report.quoted;
    let measured = report.reference.as_ref();
    println!(
        "A2A bench: blocking SendMessage over JSON-RPC, the agent's model delegating each \
         question to a fast A2A peer and answering after its result; {} questions to Baton",
        report.baton.questions
    );
    match measured {
        Some(r) => println!(
            "The reference, tiny-harness 0.9.0, measured after Baton in this run: {} questions",
            r.questions
        ),
        None => println!(
            "The reference, tiny-harness 0.9.0: its figures from issue 13, quoted (--reference measures it)"
        ),
    }
    println!();
    println!(
        "{:<44} {:>16} {:>22} {:>18}",
        "", "Baton", "tiny-harness 0.9.0", "Baton / reference"
    );
    let range = |(low, high): (f64, f64)| format!("{low}–{high}");
    let row = |label: &str, ours: Option<f64>, theirs: Option<f64>, quoted: String| {
        // Three decimals at most, and no float noise.
        let show = |v: Option<f64>| {
            v.map_or("n/a".to_string(), |v| {
                format!("{}", (v * 1e3).round() / 1e3)
            })
        };
        let (theirs_shown, ratio) = match measured {
            Some(_) => (show(theirs), show(ours.zip(theirs).map(|(o, t)| o / t))),
            None => (quoted, String::new()),
        };
        println!(
            "{label:<44} {:>16} {theirs_shown:>22} {ratio:>18}",
            show(ours)
        );
    };
    let answer_s = |m: &Measured| {
        m.one_at_a_time
            .latency
            .as_ref()
            .map(|l| round(l.p50_ms) / 1e3)
    };
    row(
        "time to answer, one at a time, p50 (s)",
        answer_s(&report.baton),
        measured.and_then(answer_s),
        range(q.answer_p50_s),
    );
    for b in &report.baton.batches {
        let theirs =
            measured.and_then(|r| r.batches.iter().find(|t| t.concurrency == b.concurrency));
        let quoted = |v: (f64, f64)| {
            if b.concurrency == 10 {
                range(v)
            } else {
                "-".to_string()
            }
        };
        row(
            &format!("throughput, {} in flight (tasks/s)", b.concurrency),
            Some(b.throughput_per_s),
            theirs.map(|t| t.throughput_per_s),
            quoted(q.throughput_c10),
        );
        row(
            &format!(
                "  CPU-s per task, harness + dev server (C={})",
                b.concurrency
            ),
            b.cpu_per_task(),
            theirs.and_then(Batch::cpu_per_task),
            quoted(q.cpu_s_per_task),
        );
        row(
            "    of which the dev server",
            b.cpu_dev_server,
            theirs.and_then(|t| t.cpu_dev_server),
            "-".to_string(),
        );
        for error in b.errors.iter().chain(theirs.iter().flat_map(|t| &t.errors)) {
            println!("    error: {error}");
        }
    }
    row(
        "RSS of the harness, ready, no task yet (MB)",
        report.baton.rss_ready_mb,
        measured.and_then(|r| r.rss_ready_mb),
        q.rss_idle_mb.to_string(),
    );
    row(
        "RSS of the harness, idle after 5 tasks (MB)",
        report.baton.rss_idle_mb,
        measured.and_then(|r| r.rss_idle_mb),
        q.rss_idle_mb.to_string(),
    );
    row(
        "RSS of the harness after its last task (MB)",
        report.baton.rss_after_mb,
        measured.and_then(|r| r.rss_after_mb),
        format!("{} (after 200)", q.rss_after_200_mb),
    );
    let cold_s = |m: &Measured| m.cold_start_ms.as_ref().map(|l| l.p50_ms / 1e3);
    row(
        "cold start, exec to card served, p50 (s)",
        cold_s(&report.baton),
        measured.and_then(cold_s),
        range(q.cold_start_s),
    );
    row(
        "cold start, own embedded dev server, p50 (s)",
        report
            .baton
            .cold_start_embedded_ms
            .as_ref()
            .map(|l| l.p50_ms / 1e3),
        None,
        "-".to_string(),
    );
    let completed = |m: &Measured| m.workflow_tasks.as_ref().map(|t| t.completed as f64);
    let lost = |m: &Measured| m.workflow_tasks.as_ref().map(|t| t.timed_out as f64);
    let slowest = |m: &Measured| {
        let tasks = m.workflow_tasks.as_ref()?;
        tasks.run_ms.as_ref().map(|l| l.max_ms)
    };
    row(
        "workflow tasks completed",
        completed(&report.baton),
        measured.and_then(completed),
        "-".to_string(),
    );
    row(
        "  timed out, never answered by a worker",
        lost(&report.baton),
        measured.and_then(lost),
        "-".to_string(),
    );
    row(
        "  slowest, started to completed (ms)",
        slowest(&report.baton),
        measured.and_then(slowest),
        "-".to_string(),
    );
    let one_at_a_time_errors = measured.iter().flat_map(|r| &r.one_at_a_time.errors);
    for error in report
        .baton
        .one_at_a_time
        .errors
        .iter()
        .chain(one_at_a_time_errors)
    {
        println!("    error: {error}");
    }
    println!();
    report.machine.print_line(report.total_s);
}

/// `baton worker`'s config: the agent `desk` with its gateway on `port`, the bench peer as
/// `peer` (followed, since the peer ends its tasks within the create), and no rate limit; its
/// Temporal is the TOML section `temporal`.
fn worker_toml(temporal: &str, peer_url: &str, model_url: &str, port: u16) -> String {
    format!(
        "agents = [{{ id = \"peer\", url = \"{peer_url}\", updates = \"follow\" }}]\n\
         [agent]\nid = \"desk\"\n\
         [server]\nbind = \"127.0.0.1:{port}\"\nbase_url = \"http://127.0.0.1:{port}\"\n\
         rate_limit_per_minute = 0\nmax_concurrent_requests = 4096\n\
         {temporal}\
         [model]\nbase_url = \"{model_url}\"\nmodel = \"bench-model\"\ntimeout = \"30s\"\n"
    )
}

/// `[temporal]` for a cluster that is already running at `address`.
fn remote_section(address: &str, search_attributes: bool) -> String {
    format!(
        "[temporal]\nmode = \"remote\"\naddress = \"{address}\"\ntls = false\n\
         search_attributes = {search_attributes}\n"
    )
}

/// The reference's config for the same agent: `desk` on `port`, the bench peer as `peer`
/// (updates `auto`, its default), the same model over Chat Completions, its store in `dir`, no
/// rate limit to speak of (its 0 refuses every request).
fn reference_toml(
    temporal_address: &str,
    peer_url: &str,
    model_url: &str,
    port: u16,
    dir: &Path,
) -> String {
    let store = dir.join("tiny-harness.sqlite3");
    format!(
        "[[agents]]\nid = \"peer\"\nurl = \"{peer_url}\"\n\
         [agent]\nid = \"desk\"\n\
         [server]\nbind = \"127.0.0.1:{port}\"\nbase_url = \"http://127.0.0.1:{port}\"\n\
         rate_limit_per_minute = 1000000000\n\
         [temporal]\nmode = \"remote\"\naddress = \"{temporal_address}\"\n\
         namespace = \"default\"\ntls = false\n\
         [openai]\nbase_url = \"{model_url}\"\napi = \"chat_completions\"\n\
         model = \"bench-model\"\n\
         [store]\nsqlite_path = \"{}\"\n",
        store.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_config::Settings;

    #[test]
    fn the_worker_config_serves_the_gateway_and_knows_the_peer() {
        let toml = worker_toml(
            &remote_section("127.0.0.1:7233", true),
            "http://127.0.0.1:9000",
            "http://127.0.0.1:9001/v1",
            9002,
        );
        let settings = Settings::parse(&toml, Path::new("/tmp"), &|_| None).unwrap();
        assert_eq!(settings.agents.len(), 1);
        assert_eq!(settings.agents[0].id, "peer");
        assert_eq!(settings.server.rate_limit_per_minute, 0);
        assert_eq!(settings.temporal.task_queue, "desk");
        assert_eq!(settings.temporal.mode, baton_config::TemporalMode::Remote);
        assert_eq!(settings.temporal.address.as_deref(), Some("127.0.0.1:7233"));
        assert!(settings.temporal.search_attributes);
    }

    #[test]
    fn the_cold_start_config_runs_its_own_dev_server_on_a_new_database() {
        let section = embedded_section(Path::new("/tmp/cold"), Some(Path::new("/bin/temporal")));
        let toml = worker_toml(
            &section.unwrap(),
            "http://127.0.0.1:9000",
            "http://127.0.0.1:9001/v1",
            9002,
        );
        let settings = Settings::parse(&toml, Path::new("/tmp"), &|_| None).unwrap();
        assert_eq!(settings.temporal.mode, baton_config::TemporalMode::Embedded);
        let embedded = &settings.temporal.embedded;
        assert_eq!(embedded.database, Path::new("/tmp/cold/temporal.sqlite"));
        assert_eq!(embedded.binary, Path::new("/bin/temporal"));
        assert_eq!((embedded.port, embedded.ui_port), (0, 0));
        assert_eq!(settings.server.rate_limit_per_minute, 0);
    }

    #[test]
    fn the_reference_config_names_the_same_agent_peer_and_model() {
        let toml = reference_toml(
            "127.0.0.1:7233",
            "http://127.0.0.1:9000",
            "http://127.0.0.1:9001/v1",
            9002,
            Path::new("/tmp/bench"),
        );
        let config: toml::Table = toml.parse().unwrap();
        assert_eq!(config["agent"]["id"].as_str(), Some("desk"));
        assert_eq!(config["agents"][0]["id"].as_str(), Some("peer"));
        assert_eq!(
            config["agents"][0]["url"].as_str(),
            Some("http://127.0.0.1:9000")
        );
        assert_eq!(config["server"]["bind"].as_str(), Some("127.0.0.1:9002"));
        assert_eq!(
            config["temporal"]["address"].as_str(),
            Some("127.0.0.1:7233")
        );
        assert_eq!(config["openai"]["api"].as_str(), Some("chat_completions"));
        assert_eq!(
            config["store"]["sqlite_path"].as_str(),
            Some("/tmp/bench/tiny-harness.sqlite3")
        );
    }
}
