//! Baton's own Prometheus metrics. They live on the meter of the Temporal runtime's Prometheus
//! exporter, so one `/metrics` endpoint serves both Temporal's worker metrics (`temporal_*`) and
//! these (`baton_*`).
//!
//! Workflow code cannot be handed a meter, so the process installs one [`Metrics`] with
//! [`install`] and everything records through [`global`]; before that, or in a process without
//! a metrics endpoint, recording does nothing. Every label value comes from configuration or
//! from a fixed set in the code, never from a stranger's input, so the number of series stays
//! bounded.

#![warn(missing_docs)]

mod endpoint;

use std::sync::{Arc, LazyLock, OnceLock};
use std::time::Duration;

use temporalio_common::telemetry::metrics::{
    CoreMeter, Counter, Gauge, HistogramDuration, MetricAttributes, MetricKeyValue,
    MetricParameters, NewAttributes, NoOpCoreMeter, UpDownCounter,
};

pub use endpoint::{DURATION_BUCKETS, MetricsEndpoint};

/// How long the gateway took to answer a request (exported as `…_seconds`).
const GATEWAY_REQUEST_DURATION: &str = "baton_gateway_request_duration";
/// How long an A2A method took (exported as `…_seconds`).
const GATEWAY_CALL_DURATION: &str = "baton_gateway_call_duration";
/// Baton's duration histograms, which get [`DURATION_BUCKETS`].
const DURATION_HISTOGRAMS: [&str; 2] = [GATEWAY_REQUEST_DURATION, GATEWAY_CALL_DURATION];

/// How a delegation ended, as the parent recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelegationOutcome {
    /// The sub-task ended COMPLETED.
    Completed,
    /// The sub-task ended FAILED, or its creation failed.
    Failed,
    /// The sub-task ended CANCELED.
    Canceled,
    /// The sub-task ended REJECTED.
    Rejected,
}

impl DelegationOutcome {
    fn label(self) -> &'static str {
        match self {
            DelegationOutcome::Completed => "completed",
            DelegationOutcome::Failed => "failed",
            DelegationOutcome::Canceled => "canceled",
            DelegationOutcome::Rejected => "rejected",
        }
    }
}

/// What became of a push that reached the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushOutcome {
    /// The push passed the receiver's checks and went to the stand-in.
    Accepted,
    /// Refused, with a reason from a fixed set (the receiver's refusal codes).
    Refused(&'static str),
}

/// Baton's instruments on one meter.
pub struct Metrics {
    meter: Arc<dyn CoreMeter>,
    delegations_started: Counter,
    delegations_finished: Counter,
    pushes: Counter,
    follow_streams_open: UpDownCounter,
    model_turns: Counter,
    model_tokens: Counter,
    tool_calls: Counter,
    gateway_requests: Counter,
    gateway_request_duration: HistogramDuration,
    gateway_refusals: Counter,
    gateway_calls: Counter,
    gateway_call_duration: HistogramDuration,
    build_info: Gauge,
}

/// What became of one attempt of an MCP tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCallOutcome {
    /// The tool answered.
    Answered,
    /// The tool answered with an error of its own, or the call was refused.
    Error,
    /// No answer: a timeout, or a server that could not be reached.
    Failed,
}

impl ToolCallOutcome {
    fn label(self) -> &'static str {
        match self {
            ToolCallOutcome::Answered => "answered",
            ToolCallOutcome::Error => "error",
            ToolCallOutcome::Failed => "failed",
        }
    }
}

impl Metrics {
    /// Registers every `baton_*` instrument on `meter`.
    pub fn new(meter: Arc<dyn CoreMeter>) -> Self {
        // The exporter adds `_total` to every counter's name.
        let counter = |name: &'static str, description: &'static str| {
            meter.counter(
                MetricParameters::builder()
                    .name(name)
                    .description(description)
                    .build(),
            )
        };
        Metrics {
            delegations_started: counter(
                "baton_delegations_started",
                "Sub-tasks a TaskWorkflow delegated, by its task queue and the agent",
            ),
            delegations_finished: counter(
                "baton_delegations_finished",
                "Sub-tasks resolved, by task queue, agent and outcome",
            ),
            pushes: counter(
                "baton_pushes",
                "Pushes that reached the push receiver, by outcome and refusal reason",
            ),
            follow_streams_open: meter.up_down_counter(
                MetricParameters::builder()
                    .name("baton_follow_streams_open")
                    .description("SubscribeToTask streams held open now, by agent")
                    .build(),
            ),
            model_turns: counter(
                "baton_model_turns",
                "Model calls, by task queue and outcome",
            ),
            model_tokens: counter(
                "baton_model_tokens",
                "Tokens the model reported, by task queue and direction (input or output)",
            ),
            tool_calls: counter(
                "baton_tool_calls",
                "Attempts of MCP tool calls, by task queue, tool and outcome",
            ),
            gateway_requests: counter(
                "baton_gateway_requests",
                "Requests the gateway answered, by agent, binding and HTTP status",
            ),
            gateway_request_duration: meter.histogram_duration(
                MetricParameters::builder()
                    .name(GATEWAY_REQUEST_DURATION)
                    .description(
                        "How long the gateway took to answer, by agent and binding",
                    )
                    .build(),
            ),
            gateway_refusals: counter(
                "baton_gateway_refusals",
                "Requests the gateway refused, by agent, binding and A2A reason (RATE_LIMIT_EXCEEDED, REQUEST_TOO_LARGE, UNAUTHENTICATED, UNAVAILABLE, ...)",
            ),
            gateway_calls: counter(
                "baton_gateway_calls",
                "A2A methods the gateway answered, by agent, method and outcome (ok, or the A2A error reason)",
            ),
            gateway_call_duration: meter.histogram_duration(
                MetricParameters::builder()
                    .name(GATEWAY_CALL_DURATION)
                    .description(
                        "How long an A2A method took, by agent and method; a stream, until it starts",
                    )
                    .build(),
            ),
            build_info: meter.gauge(
                MetricParameters::builder()
                    .name("baton_build_info")
                    .description("1, labelled with the version of the running baton")
                    .build(),
            ),
            meter,
        }
    }

    fn labels<const N: usize>(&self, pairs: [(&'static str, &str); N]) -> MetricAttributes {
        self.meter.new_attributes(NewAttributes::from(
            pairs.map(|(key, value)| MetricKeyValue::new(key, value.to_string())),
        ))
    }

    /// A sub-task a `TaskWorkflow` on `task_queue` delegated to `agent`.
    pub fn delegation_started(&self, task_queue: &str, agent: &str) {
        let labels = self.labels([("task_queue", task_queue), ("agent", agent)]);
        self.delegations_started.add(1, &labels);
    }

    /// A sub-task delegated to `agent` whose row resolved with `outcome`.
    pub fn delegation_finished(&self, task_queue: &str, agent: &str, outcome: DelegationOutcome) {
        let labels = self.labels([
            ("task_queue", task_queue),
            ("agent", agent),
            ("outcome", outcome.label()),
        ]);
        self.delegations_finished.add(1, &labels);
    }

    /// A push that reached the push receiver of `task_queue`.
    pub fn push(&self, task_queue: &str, outcome: PushOutcome) {
        let (outcome, reason) = match outcome {
            PushOutcome::Accepted => ("accepted", ""),
            PushOutcome::Refused(reason) => ("refused", reason),
        };
        let labels = self.labels([
            ("task_queue", task_queue),
            ("outcome", outcome),
            ("reason", reason),
        ]);
        self.pushes.add(1, &labels);
    }

    /// Counts a follow stream as open until the returned guard is dropped.
    pub fn follow_stream_opened(&self, agent: &str) -> OpenStream {
        let labels = self.labels([("agent", agent)]);
        self.follow_streams_open.add(1, &labels);
        OpenStream {
            gauge: self.follow_streams_open.clone(),
            labels,
        }
    }

    /// A model call that answered, with the tokens it reported.
    pub fn model_turn_answered(&self, task_queue: &str, input_tokens: u64, output_tokens: u64) {
        let labels = self.labels([("task_queue", task_queue), ("outcome", "answered")]);
        self.model_turns.add(1, &labels);
        for (direction, tokens) in [("input", input_tokens), ("output", output_tokens)] {
            let labels = self.labels([("task_queue", task_queue), ("direction", direction)]);
            self.model_tokens.add(tokens, &labels);
        }
    }

    /// A model call that failed (each failed attempt, retried or not).
    pub fn model_turn_failed(&self, task_queue: &str) {
        let labels = self.labels([("task_queue", task_queue), ("outcome", "failed")]);
        self.model_turns.add(1, &labels);
    }

    /// One request the gateway of agent `agent` answered: its binding (`jsonrpc`, `rest`, `grpc`,
    /// `card`, `push`), the HTTP status, and how long the answer took.
    pub fn gateway_request(&self, agent: &str, binding: &str, status: u16, took: Duration) {
        let status = status.to_string();
        let labels = self.labels([
            ("agent", agent),
            ("binding", binding),
            ("status", status.as_str()),
        ]);
        self.gateway_requests.add(1, &labels);
        let labels = self.labels([("agent", agent), ("binding", binding)]);
        self.gateway_request_duration.record(took, &labels);
    }

    /// One refused request; `reason` is one of the gateway's fixed refusal reasons.
    pub fn gateway_refusal(&self, agent: &str, binding: &str, reason: &str) {
        let labels = self.labels([("agent", agent), ("binding", binding), ("reason", reason)]);
        self.gateway_refusals.add(1, &labels);
    }

    /// One A2A method answered; `method` and `outcome` come from fixed sets (the A2A methods,
    /// `ok` or an A2A error reason), so the label set stays bounded.
    pub fn gateway_call(&self, agent: &str, method: &str, outcome: &str, took: Duration) {
        let labels = self.labels([("agent", agent), ("method", method), ("outcome", outcome)]);
        self.gateway_calls.add(1, &labels);
        let labels = self.labels([("agent", agent), ("method", method)]);
        self.gateway_call_duration.record(took, &labels);
    }

    /// Says which version runs: `baton_build_info{version="…"} 1`.
    pub fn record_build(&self, version: &str) {
        let labels = self.labels([("version", version)]);
        self.build_info.record(1, &labels);
    }

    /// One attempt of a call of the MCP tool `tool`; the tool names are the operator's, so the
    /// label set stays bounded.
    pub fn tool_call(&self, task_queue: &str, tool: &str, outcome: ToolCallOutcome) {
        let labels = self.labels([
            ("task_queue", task_queue),
            ("tool", tool),
            ("outcome", outcome.label()),
        ]);
        self.tool_calls.add(1, &labels);
    }
}

/// An open follow stream; dropping it closes it in the gauge.
pub struct OpenStream {
    gauge: UpDownCounter,
    labels: MetricAttributes,
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.gauge.add(-1, &self.labels);
    }
}

static INSTALLED: OnceLock<Metrics> = OnceLock::new();
static DISABLED: LazyLock<Metrics> = LazyLock::new(|| Metrics::new(Arc::new(NoOpCoreMeter)));

/// Makes `metrics` the process's metrics. Only the first call counts: a process serves one
/// metrics endpoint.
pub fn install(metrics: Metrics) {
    let _ = INSTALLED.set(metrics);
}

/// The process's metrics: the installed ones, or instruments that record nothing.
pub fn global() -> &'static Metrics {
    INSTALLED.get().unwrap_or(&DISABLED)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn scrape(endpoint: &MetricsEndpoint) -> String {
        reqwest::get(endpoint.url())
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    fn endpoint() -> MetricsEndpoint {
        MetricsEndpoint::start("127.0.0.1:0".parse().unwrap()).unwrap()
    }

    /// The sample line of `name` whose labels include every one of `labels`, as its value.
    fn sample(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
        text.lines()
            .filter(|line| line.starts_with(&format!("{name}{{")))
            .find(|line| labels.iter().all(|label| line.contains(label)))
            .and_then(|line| line.rsplit(' ').next())
            .map(|value| value.parse().unwrap())
    }

    #[tokio::test]
    async fn delegations_are_counted_by_queue_agent_and_outcome() {
        let endpoint = endpoint();
        let metrics = Metrics::new(endpoint.meter());
        metrics.delegation_started("desk", "ledger");
        metrics.delegation_started("desk", "ledger");
        metrics.delegation_started("desk", "self");
        metrics.delegation_finished("desk", "ledger", DelegationOutcome::Completed);
        metrics.delegation_finished("desk", "ledger", DelegationOutcome::Canceled);
        metrics.delegation_finished("desk", "self", DelegationOutcome::Failed);
        metrics.delegation_finished("desk", "self", DelegationOutcome::Rejected);

        let text = scrape(&endpoint).await;
        let started = "baton_delegations_started_total";
        assert_eq!(sample(&text, started, &[r#"agent="ledger""#]), Some(2.0));
        assert_eq!(sample(&text, started, &[r#"agent="self""#]), Some(1.0));
        let finished = "baton_delegations_finished_total";
        for (agent, outcome) in [
            ("ledger", "completed"),
            ("ledger", "canceled"),
            ("self", "failed"),
            ("self", "rejected"),
        ] {
            let labels = [
                r#"task_queue="desk""#,
                &format!(r#"agent="{agent}""#),
                &format!(r#"outcome="{outcome}""#),
            ];
            assert_eq!(sample(&text, finished, &labels), Some(1.0), "{text}");
        }
        assert_eq!(
            sample(
                &text,
                finished,
                &[r#"agent="ledger""#, r#"outcome="failed""#]
            ),
            None
        );
    }

    #[tokio::test]
    async fn pushes_model_turns_and_tokens_are_counted() {
        let endpoint = endpoint();
        let metrics = Metrics::new(endpoint.meter());
        metrics.push("desk", PushOutcome::Accepted);
        metrics.push("desk", PushOutcome::Refused("bad_token"));
        metrics.push("desk", PushOutcome::Refused("bad_token"));
        metrics.model_turn_answered("desk", 120, 7);
        metrics.model_turn_answered("desk", 80, 3);
        metrics.model_turn_failed("desk");

        let text = scrape(&endpoint).await;
        let pushes = "baton_pushes_total";
        assert_eq!(
            sample(&text, pushes, &[r#"outcome="accepted""#, r#"reason="""#]),
            Some(1.0)
        );
        assert_eq!(
            sample(
                &text,
                pushes,
                &[r#"outcome="refused""#, r#"reason="bad_token""#]
            ),
            Some(2.0)
        );
        let turns = "baton_model_turns_total";
        assert_eq!(sample(&text, turns, &[r#"outcome="answered""#]), Some(2.0));
        assert_eq!(sample(&text, turns, &[r#"outcome="failed""#]), Some(1.0));
        let tokens = "baton_model_tokens_total";
        assert_eq!(
            sample(&text, tokens, &[r#"direction="input""#]),
            Some(200.0)
        );
        assert_eq!(
            sample(&text, tokens, &[r#"direction="output""#]),
            Some(10.0)
        );
    }

    #[tokio::test]
    async fn gateway_requests_and_the_build_are_recorded() {
        let endpoint = endpoint();
        let metrics = Metrics::new(endpoint.meter());
        metrics.gateway_request("desk", "jsonrpc", 200, Duration::from_millis(12));
        metrics.gateway_request("desk", "jsonrpc", 429, Duration::from_millis(1));
        metrics.record_build("0.1.0");
        let text = scrape(&endpoint).await;
        let requests = "baton_gateway_requests_total";
        assert_eq!(
            sample(
                &text,
                requests,
                &[r#"binding="jsonrpc""#, r#"status="200""#]
            ),
            Some(1.0)
        );
        assert_eq!(sample(&text, requests, &[r#"status="429""#]), Some(1.0));
        assert!(
            text.contains("baton_gateway_request_duration_seconds_bucket"),
            "{text}"
        );
        assert_eq!(
            sample(&text, "baton_build_info", &[r#"version="0.1.0""#]),
            Some(1.0)
        );
    }

    /// Durations are in seconds, by Prometheus's convention, in buckets from 1 ms: a call of
    /// 5 ms lands below 10 ms, not in a first bucket of 50 ms with everything else.
    #[tokio::test]
    async fn a_5_ms_call_lands_in_a_bucket_below_10_ms() {
        let endpoint = endpoint();
        let metrics = Metrics::new(endpoint.meter());
        metrics.gateway_call("desk", "GetTask", "ok", Duration::from_millis(5));
        let text = scrape(&endpoint).await;
        let buckets = "baton_gateway_call_duration_seconds_bucket";
        let bucket = |le: &str| sample(&text, buckets, &[&format!(r#"le="{le}""#)]);
        assert_eq!(bucket("0.0025"), Some(0.0), "{text}");
        assert_eq!(bucket("0.005"), Some(1.0), "{text}");
        assert_eq!(bucket("60"), Some(1.0), "{text}");
        assert_eq!(
            sample(&text, "baton_gateway_call_duration_seconds_sum", &[]),
            Some(0.005)
        );
        // Temporal's own counters end in `_total` too.
        assert!(!text.contains("_total_total"), "{text}");
    }

    #[tokio::test]
    async fn tool_calls_are_counted_by_tool_and_outcome() {
        let endpoint = endpoint();
        let metrics = Metrics::new(endpoint.meter());
        metrics.tool_call("ledger", "get_order", ToolCallOutcome::Answered);
        metrics.tool_call("ledger", "get_order", ToolCallOutcome::Answered);
        metrics.tool_call("ledger", "get_order", ToolCallOutcome::Failed);
        metrics.tool_call("ledger", "refund", ToolCallOutcome::Error);
        let text = scrape(&endpoint).await;
        let calls = "baton_tool_calls_total";
        let of = |tool: &str, outcome: &str| {
            sample(
                &text,
                calls,
                &[
                    &format!("tool=\"{tool}\""),
                    &format!("outcome=\"{outcome}\""),
                ],
            )
        };
        assert_eq!(of("get_order", "answered"), Some(2.0));
        assert_eq!(of("get_order", "failed"), Some(1.0));
        assert_eq!(of("refund", "error"), Some(1.0));
    }

    #[tokio::test]
    async fn a_follow_stream_is_open_until_its_guard_drops() {
        let endpoint = endpoint();
        let metrics = Metrics::new(endpoint.meter());
        let open = "baton_follow_streams_open";
        let first = metrics.follow_stream_opened("ledger");
        let second = metrics.follow_stream_opened("ledger");
        assert_eq!(
            sample(&scrape(&endpoint).await, open, &[r#"agent="ledger""#]),
            Some(2.0)
        );
        drop(first);
        assert_eq!(
            sample(&scrape(&endpoint).await, open, &[r#"agent="ledger""#]),
            Some(1.0)
        );
        drop(second);
        assert_eq!(
            sample(&scrape(&endpoint).await, open, &[r#"agent="ledger""#]),
            Some(0.0)
        );
    }

    #[tokio::test]
    async fn every_metric_has_its_help_text() {
        let endpoint = endpoint();
        let metrics = Metrics::new(endpoint.meter());
        metrics.delegation_started("desk", "ledger");
        metrics.delegation_finished("desk", "ledger", DelegationOutcome::Completed);
        metrics.push("desk", PushOutcome::Accepted);
        let _open = metrics.follow_stream_opened("ledger");
        metrics.model_turn_answered("desk", 1, 1);
        let text = scrape(&endpoint).await;
        for (name, kind) in [
            ("baton_delegations_started_total", "counter"),
            ("baton_delegations_finished_total", "counter"),
            ("baton_pushes_total", "counter"),
            ("baton_follow_streams_open", "gauge"),
            ("baton_model_turns_total", "counter"),
            ("baton_model_tokens_total", "counter"),
        ] {
            assert!(text.contains(&format!("# HELP {name} ")), "{name}:\n{text}");
            assert!(
                text.contains(&format!("# TYPE {name} {kind}")),
                "{name}:\n{text}"
            );
        }
    }

    #[tokio::test]
    async fn a_taken_address_is_refused_naming_the_setting() {
        let first = endpoint();
        let error = MetricsEndpoint::start(first.address()).err().unwrap();
        assert!(
            format!("{error:#}").starts_with(&format!(
                "metrics.bind: cannot serve metrics on {}",
                first.address()
            )),
            "{error:#}"
        );
    }

    #[tokio::test]
    async fn a_dropped_endpoint_stops_listening() {
        let endpoint = endpoint();
        let url = endpoint.url();
        assert!(reqwest::get(&url).await.is_ok());
        drop(endpoint);
        let mut refused = false;
        for _ in 0..50 {
            if reqwest::get(&url).await.is_err() {
                refused = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(refused, "still answering on {url}");
    }

    #[tokio::test]
    async fn without_an_installed_meter_recording_does_nothing() {
        // No test installs the process's metrics, so `global()` records with a no-op meter: what
        // it records reaches no endpoint.
        let endpoint = endpoint();
        let metrics = global();
        metrics.delegation_started("unmetered-queue", "unmetered-agent");
        metrics.push("unmetered-queue", PushOutcome::Refused("bad_token"));
        drop(metrics.follow_stream_opened("unmetered-agent"));
        metrics.model_turn_failed("unmetered-queue");
        let text = scrape(&endpoint).await;
        assert!(!text.contains("unmetered"), "{text}");
        // The same calls on the endpoint's own meter are counted.
        let counted = Metrics::new(endpoint.meter());
        counted.delegation_started("unmetered-queue", "unmetered-agent");
        let text = scrape(&endpoint).await;
        assert!(text.contains("unmetered-agent"), "{text}");
    }
}
