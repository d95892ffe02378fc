//! The figures of one `baton-bench delegation` run, printed as text or JSON.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

use super::measure::{Latency, Steps, round};
use super::plot::{self, Chart, Group, Panel};
use baton_tests::fast_peer::PeerStats;

/// How a bench shows its report: `--json`, `--plot <file.svg>`.
#[derive(clap::Args, Debug, Clone)]
pub struct Output {
    /// Print the figures as JSON on stdout instead of the text report.
    #[arg(long)]
    pub json: bool,
    /// Also draw the figures, each beside the baseline of the same run, as an SVG chart here.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// Prints a bench's `report`: as JSON on stdout with `--json`, else as `text` prints it; with
/// `--plot`, also writes the `chart` of it. The bench fails when any of its `failures` happened.
pub fn print_report<R: Serialize>(
    report: &R,
    output: &Output,
    text: fn(&R),
    chart: fn(&R) -> Chart,
    failures: usize,
) -> anyhow::Result<ExitCode> {
    if let Some(path) = &output.plot {
        plot::write(path, &chart(report))?;
    }
    if output.json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        text(report);
    }
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The targets docs/performance.md holds Baton to: its latency at most twice the baseline's, its
/// throughput at least half of it.
pub const TARGET_LATENCY_RATIO: f64 = 2.0;
pub const TARGET_THROUGHPUT_RATIO: f64 = 0.5;
pub const TARGET_PUSH_MIB_PER_1000: f64 = 20.0;

/// One batch of N tasks.
#[derive(Debug, Clone, Serialize)]
pub struct Batch {
    pub name: String,
    pub ok: usize,
    pub failed: usize,
    /// The first few failures.
    pub errors: Vec<String>,
    pub wall_s: f64,
    pub throughput_per_s: f64,
    /// From start_workflow to get_result, per task.
    pub latency: Option<Latency>,
    /// How many tasks took how many model turns.
    pub turns: BTreeMap<u32, usize>,
    /// The task with the median latency: its history is the one counted.
    #[serde(rename = "sample_id")]
    pub median_id: String,
}

impl Batch {
    fn p50(&self) -> f64 {
        self.latency.as_ref().map_or(f64::NAN, |l| l.p50_ms)
    }

    fn p95(&self) -> f64 {
        self.latency.as_ref().map_or(f64::NAN, |l| l.p95_ms)
    }
}

/// The Temporal steps of the sample tasks.
#[derive(Debug, Clone, Serialize)]
pub struct StepsSection {
    pub baseline_parent: Steps,
    pub baseline_child: Steps,
    pub delegation_parent: Steps,
    /// `None` when the delegation needed no stand-in.
    pub delegation_stand_in: Option<Steps>,
    pub push_parent: Steps,
    pub push_stand_in: Option<Steps>,
}

/// Delegation against the baseline of the same run.
#[derive(Debug, Clone, Serialize)]
pub struct Ratios {
    pub latency_p50: f64,
    pub latency_p95: f64,
    pub throughput: f64,
    pub push_latency_p50: f64,
    pub push_throughput: f64,
    pub baseline_steps: usize,
    pub delegation_steps: usize,
    pub push_delegation_steps: usize,
    pub steps: f64,
}

impl Ratios {
    pub fn of(baseline: &Batch, follow: &Batch, push: &Batch, steps: &StepsSection) -> Ratios {
        let ratio = |a: f64, b: f64| round(a / b * 100.0) / 100.0;
        let baseline_steps = steps.baseline_parent.steps + steps.baseline_child.steps;
        let stand_in = |s: &Option<Steps>| s.as_ref().map_or(0, |s| s.steps);
        let delegation_steps = steps.delegation_parent.steps + stand_in(&steps.delegation_stand_in);
        Ratios {
            latency_p50: ratio(follow.p50(), baseline.p50()),
            latency_p95: ratio(follow.p95(), baseline.p95()),
            throughput: ratio(follow.throughput_per_s, baseline.throughput_per_s),
            push_latency_p50: ratio(push.p50(), baseline.p50()),
            push_throughput: ratio(push.throughput_per_s, baseline.throughput_per_s),
            baseline_steps,
            delegation_steps,
            push_delegation_steps: steps.push_parent.steps + stand_in(&steps.push_stand_in),
            steps: ratio(delegation_steps as f64, baseline_steps as f64),
        }
    }
}

/// `baton worker` from exec to "worker ready", and from SIGTERM to exit.
#[derive(Debug, Clone, Serialize)]
pub struct ColdStart {
    pub runs: usize,
    pub ready: Latency,
    pub stop: Latency,
    /// The largest RSS of a cold-started worker, idle 0.5 s after "worker ready".
    pub idle_rss_mib: f64,
    /// Workers sent SIGTERM the moment they printed "worker ready".
    pub sigterm_at_ready_probes: usize,
    /// Of those, how many died of the signal instead of stopping gracefully.
    pub sigterm_at_ready_unclean: usize,
}

/// Sub-tasks parked in one watch mode.
#[derive(Debug, Clone, Serialize)]
pub struct ParkPhase {
    pub mode: String,
    pub requested: usize,
    pub parked: usize,
    /// Sub-tasks that did not park within the timeout; after the first, no more were started.
    pub stalled: usize,
    pub failed: usize,
    pub errors: Vec<String>,
    pub parking_s: f64,
    /// From start_workflow until the parent has heard INPUT_REQUIRED and the stand-in watches.
    pub time_to_park: Option<Latency>,
    /// The parent and stand-in of the median parked sub-task, counted before the cancel.
    pub sample_steps: Option<(Steps, Steps)>,
    pub rss_before_mib: f64,
    pub rss_parked_mib: f64,
    pub rss_after_cancel_mib: f64,
    pub growth_mib: f64,
    pub growth_mib_per_1000: f64,
    /// The same three readings after `malloc_trim(0)`, taken right after each raw one.
    pub trimmed_before_mib: f64,
    pub trimmed_parked_mib: f64,
    pub trimmed_after_cancel_mib: f64,
    pub trimmed_growth_mib_per_1000: f64,
    /// Raw RSS after every 100 sub-tasks done parking (with others still in flight).
    pub rss_curve: Vec<(usize, f64)>,
    /// SubscribeToTask streams the peer held open once parked: the follows running at once.
    pub follows_open: Option<u64>,
    pub peer: Option<PeerStats>,
    pub peer_rss_mib: Option<f64>,
    pub dev_server_rss_mib: Option<f64>,
    pub canceled: usize,
    pub cancel_s: f64,
}

/// The machine the run was on.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Machine {
    pub cpus: usize,
    pub cpu_model: String,
    pub memory_gib: f64,
    pub kernel: String,
    pub load_average_at_start: Option<f64>,
    pub load_average_at_end: Option<f64>,
}

impl Machine {
    /// The closing line of the gateway and A2A benches.
    pub fn print_line(&self, total_s: f64) {
        let load = |l: Option<f64>| l.map_or("unknown".to_string(), |l| l.to_string());
        println!(
            "machine: {} × {}, load {} → {}; {total_s} s in all",
            self.cpus,
            self.cpu_model,
            load(self.load_average_at_start),
            load(self.load_average_at_end)
        );
    }

    pub fn read(load_at_start: Option<f64>, load_at_end: Option<f64>) -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default();
        let memory_gib = std::fs::read_to_string("/proc/meminfo")
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            .map_or(0.0, |kib| round(kib / 1024.0 / 1024.0));
        Machine {
            cpus: std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
            cpu_model,
            memory_gib,
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_string(),
            load_average_at_start: load_at_start,
            load_average_at_end: load_at_end,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub parents: usize,
    pub concurrency: usize,
    pub baseline: Batch,
    /// The baseline again after the delegation batches: how much the machine drifted.
    pub baseline_after: Batch,
    /// Baseline and delegation run one task at a time: latency without queueing.
    pub sequential: Option<(Batch, Batch)>,
    pub delegation: Batch,
    pub delegation_push: Batch,
    pub ratios: Ratios,
    /// CPU seconds per delegation (follow batch), per process.
    pub cpu_seconds_per_delegation: BTreeMap<String, f64>,
    pub steps: StepsSection,
    pub cold_start: Option<ColdStart>,
    pub parking: Vec<ParkPhase>,
    pub machine: Machine,
    pub dev_server_start_ms: f64,
    /// The dev server's `--dynamic-config-value` settings, read from its command line.
    pub dev_server_tuning: Vec<String>,
    /// Set only when the run overrode the SDK's workflow cache size.
    pub max_cached_workflows: Option<usize>,
    /// Whether the worker served metrics (`--metrics`).
    pub metrics: bool,
    pub total_s: f64,
}

impl Report {
    /// Tasks that failed in any batch or parking phase.
    pub fn failures(&self) -> usize {
        [
            &self.baseline,
            &self.baseline_after,
            &self.delegation,
            &self.delegation_push,
        ]
        .iter()
        .map(|b| b.failed)
        .sum::<usize>()
            + self.parking.iter().map(|p| p.failed).sum::<usize>()
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok { "meets" } else { "MISSES" }
}

fn batch_line(batch: &Batch) -> String {
    let latency = batch
        .latency
        .as_ref()
        .map_or("no samples".to_string(), |l| {
            format!(
                "p50 {:>7.1} ms  p95 {:>7.1} ms  (min {:.1}, max {:.1})",
                l.p50_ms, l.p95_ms, l.min_ms, l.max_ms
            )
        });
    let failed = if batch.failed > 0 {
        format!("  FAILED {}: {}", batch.failed, batch.errors.join("; "))
    } else {
        String::new()
    };
    format!(
        "  {:<26} {latency}  {:>6.1} tasks/s  ({} ok in {:.2} s){failed}",
        batch.name, batch.throughput_per_s, batch.ok, batch.wall_s
    )
}

fn steps_line(label: &str, steps: &Steps) -> String {
    let mut activities: BTreeMap<&str, usize> = BTreeMap::new();
    for name in &steps.activities {
        *activities.entry(name.as_str()).or_default() += 1;
    }
    let activities: Vec<String> = activities
        .iter()
        .map(|(name, n)| format!("{name}×{n}"))
        .collect();
    format!(
        "  {label:<22} {:>3} steps = {} workflow tasks + {} activities + {} child starts + {} signals sent + {} cancels; \
         {} events, {:.0} ms [{}]",
        steps.steps,
        steps.workflow_tasks,
        steps.activities.len(),
        steps.children_started,
        steps.signals_sent,
        steps.cancels_requested,
        steps.events,
        steps.duration_ms,
        activities.join(", ")
    )
}

pub fn print_text(report: &Report) {
    let r = &report.ratios;
    let m = &report.machine;
    println!("baton-bench delegation");
    println!(
        "  machine: {} CPUs ({}), {:.1} GiB, Linux {}; load average {:?} at start, {:?} at end",
        m.cpus, m.cpu_model, m.memory_gib, m.kernel, m.load_average_at_start, m.load_average_at_end
    );
    println!(
        "  dev server: started in {:.0} ms; tuning: {}",
        report.dev_server_start_ms,
        if report.dev_server_tuning.is_empty() {
            "(none)".to_string()
        } else {
            report.dev_server_tuning.join(", ")
        }
    );
    println!(
        "  worker metrics: {}",
        if report.metrics {
            "served (--metrics)"
        } else {
            "off"
        }
    );
    println!(
        "\nlatency and throughput ({} tasks per batch, {} at once)",
        report.parents, report.concurrency
    );
    for batch in [
        &report.baseline,
        &report.delegation,
        &report.delegation_push,
        &report.baseline_after,
    ] {
        println!("{}", batch_line(batch));
    }
    if let Some((base, deleg)) = &report.sequential {
        println!("  one at a time:");
        println!("{}", batch_line(base));
        println!("{}", batch_line(deleg));
    }
    println!(
        "  model turns per delegation: {:?} (follow), {:?} (push)",
        report.delegation.turns, report.delegation_push.turns
    );
    println!("\nratios against the baseline of this run");
    println!(
        "  latency p50   delegation/baseline = {:.2}× (target ≤ {TARGET_LATENCY_RATIO}×: {}); p95 {:.2}×; push {:.2}×",
        r.latency_p50,
        verdict(r.latency_p50 <= TARGET_LATENCY_RATIO),
        r.latency_p95,
        r.push_latency_p50
    );
    if let Some((base, deleg)) = &report.sequential {
        println!(
            "  latency p50 one at a time: delegation/baseline = {:.2}×",
            deleg.p50() / base.p50()
        );
    }
    println!(
        "  throughput    delegation/baseline = {:.2} (target ≥ {TARGET_THROUGHPUT_RATIO}: {}); push {:.2}",
        r.throughput,
        verdict(r.throughput >= TARGET_THROUGHPUT_RATIO),
        r.push_throughput
    );
    println!(
        "  Temporal steps delegation/baseline = {} / {} = {:.2}× (push: {})",
        r.delegation_steps, r.baseline_steps, r.steps, r.push_delegation_steps
    );
    if !report.cpu_seconds_per_delegation.is_empty() {
        let cpu: Vec<String> = report
            .cpu_seconds_per_delegation
            .iter()
            .map(|(k, v)| format!("{k} {v:.3} s"))
            .collect();
        println!("  CPU per delegation: {}", cpu.join(", "));
    }
    println!("\nsteps, counted from the history of the median task");
    let s = &report.steps;
    println!("{}", steps_line("baseline parent", &s.baseline_parent));
    println!("{}", steps_line("baseline child", &s.baseline_child));
    println!("{}", steps_line("delegation parent", &s.delegation_parent));
    let stand_in_line = |label: &str, steps: &Option<Steps>| match steps {
        Some(steps) => steps_line(label, steps),
        None => format!("  {label:<22} none: the agent finished the sub-task within the create"),
    };
    println!(
        "{}",
        stand_in_line("stand-in (follow)", &s.delegation_stand_in)
    );
    println!("{}", steps_line("push parent", &s.push_parent));
    println!("{}", stand_in_line("stand-in (push)", &s.push_stand_in));
    if let Some(cold) = &report.cold_start {
        println!(
            "\ncold start of `baton worker` (exec → \"worker ready\", {} runs): p50 {:.0} ms, max {:.0} ms; \
             SIGTERM → exit p50 {:.0} ms",
            cold.runs, cold.ready.p50_ms, cold.ready.max_ms, cold.stop.p50_ms
        );
        println!(
            "  idle RSS of a cold-started `baton worker`: {:.1} MiB",
            cold.idle_rss_mib
        );
        if cold.sigterm_at_ready_unclean > 0 {
            println!(
                "  SIGTERM right at \"worker ready\": {}/{} workers died of the signal (no graceful stop)",
                cold.sigterm_at_ready_unclean, cold.sigterm_at_ready_probes
            );
        }
    }
    if !report.parking.is_empty() {
        let cache = report
            .max_cached_workflows
            .map_or("baton worker's workflow cache".to_string(), |n| {
                format!("EXPERIMENT: workflow cache {n}")
            });
        println!("\nmemory: RSS of the bench process (worker + model + client; {cache})");
    }
    for park in &report.parking {
        let target = if park.mode == "push" {
            format!(
                " (target ≤ {TARGET_PUSH_MIB_PER_1000} MiB: {})",
                verdict(park.growth_mib_per_1000 <= TARGET_PUSH_MIB_PER_1000)
            )
        } else {
            String::new()
        };
        println!(
            "  {:<6} parked {}/{} in {:.0} s: {:.1} → {:.1} MiB (+{:.1} MiB, {:.1} MiB per 1,000{target}); \
             after cancel {:.1} MiB",
            park.mode,
            park.parked,
            park.requested,
            park.parking_s,
            park.rss_before_mib,
            park.rss_parked_mib,
            park.growth_mib,
            park.growth_mib_per_1000,
            park.rss_after_cancel_mib
        );
        println!(
            "         after malloc_trim: {:.1} → {:.1} MiB ({:.1} MiB per 1,000); after cancel {:.1} MiB",
            park.trimmed_before_mib,
            park.trimmed_parked_mib,
            park.trimmed_growth_mib_per_1000,
            park.trimmed_after_cancel_mib
        );
        if park.rss_curve.len() > 2 {
            let curve: Vec<String> = park
                .rss_curve
                .iter()
                .map(|(n, mib)| format!("{n}:{mib:.0}"))
                .collect();
            println!(
                "         RSS (MiB) by sub-tasks parked: {}",
                curve.join(" ")
            );
        }
        if let Some(t) = &park.time_to_park {
            println!(
                "         time to park: p50 {:.0} ms, p95 {:.0} ms",
                t.p50_ms, t.p95_ms
            );
        }
        if let Some((parent, stand_in)) = &park.sample_steps {
            println!("  {}", steps_line("parked parent", parent));
            println!("  {}", steps_line("parked stand-in", stand_in));
        }
        if park.stalled > 0 {
            println!(
                "         parking STALLED: {} sub-tasks did not park within the timeout, so no more were started",
                park.stalled
            );
        }
        if let Some(open) = park.follows_open {
            println!("         SubscribeToTask streams held open at the peer once parked: {open}");
        }
        println!(
            "         cancelled {}/{} parents in {:.0} s; peer RSS {:?} MiB, dev server RSS {:?} MiB",
            park.canceled,
            park.parked + park.stalled + park.failed,
            park.cancel_s,
            park.peer_rss_mib,
            park.dev_server_rss_mib
        );
        if park.failed > 0 {
            println!(
                "         FAILED {}: {}",
                park.failed,
                park.errors.join("; ")
            );
        }
    }
    println!("\ntotal {:.0} s", report.total_s);
}

/// The delegation bench drawn: each batch's latency and throughput beside the bare round trip's.
pub fn chart(report: &Report) -> Chart {
    let loaded = format!("{} at once", report.concurrency);
    let sequential = report.sequential.as_ref();
    let latency = |pick: fn(&Latency) -> f64| {
        let of = |b: &Batch| b.latency.as_ref().map(pick);
        let mut groups = vec![Group::new(
            loaded.clone(),
            vec![
                of(&report.delegation),
                of(&report.delegation_push),
                of(&report.baseline),
            ],
        )];
        if let Some((baseline, delegation)) = sequential {
            groups.push(Group::new(
                "one at a time",
                vec![of(delegation), None, of(baseline)],
            ));
        }
        groups
    };
    Chart {
        title: format!(
            "baton-bench delegation: {} tasks per batch against the bare Temporal round trip",
            report.parents
        ),
        series: vec![
            "delegation, followed".into(),
            "delegation, pushed".into(),
            "bare round trip (baseline)".into(),
        ],
        panels: vec![
            Panel {
                title: "latency p50".into(),
                unit: "ms".into(),
                groups: latency(|l| l.p50_ms),
            },
            Panel {
                title: "latency p95".into(),
                unit: "ms".into(),
                groups: latency(|l| l.p95_ms),
            },
            Panel {
                title: "throughput".into(),
                unit: "tasks/s".into(),
                groups: vec![Group::new(
                    loaded.clone(),
                    vec![
                        Some(report.delegation.throughput_per_s),
                        Some(report.delegation_push.throughput_per_s),
                        Some(report.baseline.throughput_per_s),
                    ],
                )],
            },
        ],
    }
}
