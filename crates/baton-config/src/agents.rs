//! `agents = [...]`: the remote A2A agents this agent may delegate to, with how each is watched
//! and bounded.

use std::fmt;
use std::time::Duration;

use url::Url;

use crate::agent_auth::{self, AgentAuth};
use crate::error::Errors;
use crate::ids::required_remote_agent_id;
use crate::urls::base_url;
use crate::walk::{Field, Section, UniqueIds};

/// One entry of `agents = [...]`: a remote A2A agent this agent may delegate to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteAgentSpec {
    /// The agent's id in workflow ids, roster lines and `spawn_subtask` calls; never `self`.
    pub id: String,
    /// Where the agent is; its card is fetched from here.
    pub url: Url,
    /// The card `version` the agent must have, exactly; none takes any version.
    pub version: Option<String>,
    /// How a sub-task on the agent is watched.
    pub updates: Updates,
    /// The pause before following a task again after its stream ended or failed; default 5 s.
    pub follow_interval: Duration,
    /// How often a push-watched sub-task is fetched anyway, so a lost push costs at most this.
    pub push_safety_fetch: Duration,
    /// How long creating a sub-task on the agent may go without an answer before it fails.
    pub create_timeout: Duration,
    /// How long a retried creation waits for the agent to list the task an earlier attempt
    /// handed it the brief for, before it sends the brief again.
    pub listing_wait: Duration,
    /// How long a sub-task on the agent may run before Baton cancels it; a call may ask for
    /// less, never more.
    pub deadline: Duration,
    /// Whether the card may name an interface on another origin than `url`.
    pub allow_other_origin: bool,
    /// The credential presented to an agent whose card asks for one.
    pub auth: Option<AgentAuth>,
}

impl RemoteAgentSpec {
    /// The agent `id` at `url` with every other setting at its default, as `agents` reads
    /// `{ id, url }` alone.
    pub fn new(id: impl Into<String>, url: Url) -> RemoteAgentSpec {
        RemoteAgentSpec {
            id: id.into(),
            url,
            version: None,
            updates: Updates::default(),
            follow_interval: DEFAULT_FOLLOW_INTERVAL,
            push_safety_fetch: DEFAULT_PUSH_SAFETY_FETCH,
            create_timeout: DEFAULT_CREATE_TIMEOUT,
            listing_wait: DEFAULT_LISTING_WAIT,
            deadline: DEFAULT_DEADLINE,
            allow_other_origin: false,
            auth: None,
        }
    }
}

/// How the stand-in workflow watches a sub-task on a remote agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Updates {
    /// Push notifications when the agent's card offers them, else follow.
    #[default]
    Auto,
    /// Subscribe to the task's stream; after it ends or fails, wait `follow_interval` and
    /// subscribe again.
    Follow,
    /// No push, and no following once the task is parked.
    Off,
}

impl Updates {
    const CHOICES: [(&'static str, Updates); 3] = [
        ("auto", Updates::Auto),
        ("follow", Updates::Follow),
        ("off", Updates::Off),
    ];

    /// The word used in `baton.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Updates::Auto => "auto",
            Updates::Follow => "follow",
            Updates::Off => "off",
        }
    }
}

impl fmt::Display for Updates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

const KEYS: [&str; 11] = [
    "id",
    "url",
    "version",
    "updates",
    "follow_interval",
    "push_safety_fetch",
    "create_timeout",
    "listing_wait",
    "deadline",
    "allow_other_origin",
    "auth",
];
const DEFAULT_FOLLOW_INTERVAL: Duration = Duration::from_secs(5);
/// The safety fetch of a push watch: a lost push costs at most this. Each push-watched
/// sub-task on the agent costs one GetTask this often.
pub const DEFAULT_PUSH_SAFETY_FETCH: Duration = baton_core::watch::PUSH_SAFETY_FETCH;
/// How long a sub-task's creation may go without an answer from the agent, all attempts
/// included, before it fails: an agent down for a few minutes is waited out.
pub const DEFAULT_CREATE_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest `create_timeout`: the engine's own bound on a creation is a little longer.
pub const MAX_CREATE_TIMEOUT: Duration = Duration::from_secs(3600);
/// How long a retried creation waits for a slow agent to list the task of a brief an earlier
/// attempt handed it: past the longest an agent seen in the wild held a brief before acting on
/// it (30 s).
pub const DEFAULT_LISTING_WAIT: Duration = Duration::from_secs(90);
/// How long a sub-task may run before it is cancelled, unless the agent's `deadline` says.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(24 * 3600);
/// The longest `deadline`.
pub const MAX_DEADLINE: Duration = Duration::from_secs(30 * 24 * 3600);

pub(crate) fn read(
    field: Field<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    errors: &mut Errors,
) -> Vec<RemoteAgentSpec> {
    let mut ids = UniqueIds::default();
    field
        .tables(
            "an array of tables like agents = [{ id = \"ledger\", url = \"https://ledger.example.com\" }]",
            "a table like { id = \"ledger\", url = \"https://ledger.example.com\" }",
            errors,
        )
        .iter()
        .filter_map(|section| read_one(section, env, &mut ids, errors))
        .collect()
}

fn read_one(
    section: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
    ids: &mut UniqueIds,
    errors: &mut Errors,
) -> Option<RemoteAgentSpec> {
    section.refuse_unknown(&KEYS, errors);
    let id_field = section.field("id");
    let id = read_id(&id_field, errors);
    if let Some(id) = id {
        ids.check(id, section.path(), &id_field, errors);
    }
    let url_field = section.field("url");
    let url = if url_field.require("a string like \"https://ledger.example.com\"", errors) {
        base_url(&url_field, "https://ledger.example.com", errors)
    } else {
        None
    };
    let version = section
        .field("version")
        .optional_text("a string like \"1.0.0\"", errors);
    let updates = section.field("updates").choice(&Updates::CHOICES, errors);
    let follow_interval = section
        .field("follow_interval")
        .duration_at_least_one_second(errors);
    let push_safety_fetch = section
        .field("push_safety_fetch")
        .duration_at_least_one_second(errors);
    let create_timeout = section
        .field("create_timeout")
        .duration_up_to(Some((MAX_CREATE_TIMEOUT, "1 hour")), errors);
    let listing_wait = section
        .field("listing_wait")
        .duration_up_to(Some((MAX_CREATE_TIMEOUT, "1 hour")), errors);
    let deadline = section
        .field("deadline")
        .duration_up_to(Some((MAX_DEADLINE, "30 days (720h)")), errors);
    let allow_other_origin = section.field("allow_other_origin").boolean(errors);
    let auth = agent_auth::read(section.field("auth"), env, errors);
    let defaults = RemoteAgentSpec::new(id?, url?);
    Some(RemoteAgentSpec {
        version: version.map(str::to_owned),
        updates: updates.unwrap_or(defaults.updates),
        follow_interval: follow_interval.unwrap_or(defaults.follow_interval),
        push_safety_fetch: push_safety_fetch.unwrap_or(defaults.push_safety_fetch),
        create_timeout: create_timeout.unwrap_or(defaults.create_timeout),
        listing_wait: listing_wait.unwrap_or(defaults.listing_wait),
        deadline: deadline.unwrap_or(defaults.deadline),
        allow_other_origin: allow_other_origin.unwrap_or(defaults.allow_other_origin),
        auth,
        ..defaults
    })
}

fn read_id<'a>(field: &Field<'a>, errors: &mut Errors) -> Option<&'a str> {
    let id = required_remote_agent_id(field, "a string like \"ledger\"", errors)?;
    if id == "self" {
        field.fail(
            errors,
            "the id self is reserved for this agent itself: `agent: null` delegates to it",
        );
        return None;
    }
    Some(id)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Updates;
    use crate::test_support::*;

    const LEDGER: &str = "id = \"ledger\"\nurl = \"https://ledger.example.com\"";

    fn one_agent(extra: &str) -> String {
        format!("[[agents]]\n{LEDGER}\n{extra}")
    }

    #[test]
    fn no_agents_by_default() {
        assert!(parse("").unwrap().agents.is_empty());
        assert!(parse("agents = []").unwrap().agents.is_empty());
    }

    #[test]
    fn minimal_agent_gets_the_defaults() {
        let agents = parse(&one_agent("")).unwrap().agents;
        assert_eq!(agents.len(), 1);
        let agent = &agents[0];
        assert_eq!(agent.id, "ledger");
        assert_eq!(agent.url.as_str(), "https://ledger.example.com/");
        assert_eq!(agent.version, None);
        assert_eq!(agent.updates, Updates::Auto);
        assert_eq!(agent.follow_interval, Duration::from_secs(5));
        assert_eq!(agent.push_safety_fetch, Duration::from_secs(30));
        assert_eq!(agent.create_timeout, Duration::from_secs(300));
        assert_eq!(agent.listing_wait, Duration::from_secs(90));
        assert_eq!(agent.deadline, Duration::from_secs(24 * 3600));
        assert!(!agent.allow_other_origin);
    }

    #[test]
    fn inline_tables_and_array_of_tables_read_the_same() {
        let inline = parse(
            "agents = [\n  { id = \"ledger\", url = \"https://ledger.example.com\", updates = \"off\" },\n  \
             { id = \"desk\", url = \"http://127.0.0.1:9000/a2a\" },\n]",
        )
        .unwrap();
        let tables = parse(
            "[[agents]]\nid = \"ledger\"\nurl = \"https://ledger.example.com\"\nupdates = \"off\"\n\
             [[agents]]\nid = \"desk\"\nurl = \"http://127.0.0.1:9000/a2a\"",
        )
        .unwrap();
        assert_eq!(inline.agents, tables.agents);
        assert_eq!(inline.agents[1].url.as_str(), "http://127.0.0.1:9000/a2a");
    }

    #[test]
    fn listing_wait_is_between_a_second_and_an_hour() {
        assert_only_error(
            &one_agent("listing_wait = \"61m\""),
            "agents[0].listing_wait",
            "must be at most 1 hour (got \"61m\")",
        );
        assert_only_error(
            &one_agent("listing_wait = \"0s\""),
            "agents[0].listing_wait",
            "must be at least 1 second (got \"0s\")",
        );
    }

    #[test]
    fn every_field_is_read() {
        let agent = &parse(&one_agent(
            "version = \"2.1.0\"\nupdates = \"follow\"\nfollow_interval = \"1m30s\"\n\
             push_safety_fetch = \"2m\"\ncreate_timeout = \"45s\"\nlisting_wait = \"3s\"\n\
             allow_other_origin = true",
        ))
        .unwrap()
        .agents[0];
        assert_eq!(agent.version.as_deref(), Some("2.1.0"));
        assert_eq!(agent.updates, Updates::Follow);
        assert_eq!(agent.follow_interval, Duration::from_secs(90));
        assert_eq!(agent.push_safety_fetch, Duration::from_secs(120));
        assert_eq!(agent.create_timeout, Duration::from_secs(45));
        assert_eq!(agent.listing_wait, Duration::from_secs(3));
        assert!(agent.allow_other_origin);
    }

    #[test]
    fn create_timeout_between_a_second_and_an_hour() {
        assert_only_error(
            &one_agent("create_timeout = \"900ms\""),
            "agents[0].create_timeout",
            "must be at least 1 second (got \"900ms\")",
        );
        assert_only_error(
            &one_agent("create_timeout = \"1h1s\""),
            "agents[0].create_timeout",
            "must be at most 1 hour (got \"1h1s\")",
        );
        let hour = parse(&one_agent("create_timeout = \"1h\"")).unwrap();
        assert_eq!(hour.agents[0].create_timeout, super::MAX_CREATE_TIMEOUT);
    }

    #[test]
    fn a_deadline_between_a_second_and_thirty_days() {
        let agent = parse(&one_agent("deadline = \"90m\"")).unwrap();
        assert_eq!(agent.agents[0].deadline, Duration::from_secs(5400));
        assert_only_error(
            &one_agent("deadline = \"721h\""),
            "agents[0].deadline",
            "must be at most 30 days (720h) (got \"721h\")",
        );
        assert_only_error(
            &one_agent("deadline = \"500ms\""),
            "agents[0].deadline",
            "must be at least 1 second (got \"500ms\")",
        );
    }

    #[test]
    fn push_safety_fetch_of_at_least_a_second() {
        assert_only_error(
            &one_agent("push_safety_fetch = \"200ms\""),
            "agents[0].push_safety_fetch",
            "must be at least 1 second (got \"200ms\")",
        );
    }

    #[test]
    fn updates_words() {
        for (word, updates) in [
            ("auto", Updates::Auto),
            ("follow", Updates::Follow),
            ("off", Updates::Off),
        ] {
            let text = one_agent(&format!("updates = {word:?}"));
            assert_eq!(parse(&text).unwrap().agents[0].updates, updates);
            assert_eq!(updates.to_string(), word);
        }
        assert_eq!(Updates::default(), Updates::Auto);
    }

    #[test]
    fn updates_must_be_one_of_the_words() {
        assert_only_error(
            &one_agent("updates = \"push\""),
            "agents[0].updates",
            "must be \"auto\", \"follow\" or \"off\" (got \"push\")",
        );
        assert_only_error(
            &one_agent("updates = true"),
            "agents[0].updates",
            "must be \"auto\", \"follow\" or \"off\" (got a boolean)",
        );
    }

    #[test]
    fn follow_interval_of_at_least_a_second() {
        let text = format!(
            "{}\n{}\n{}",
            "[[agents]]\nid = \"a\"\nurl = \"https://a.example.com\"",
            "[[agents]]\nid = \"b\"\nurl = \"https://b.example.com\"",
            "[[agents]]\nid = \"c\"\nurl = \"https://c.example.com\"\nfollow_interval = \"500ms\"",
        );
        assert_only_error(
            &text,
            "agents[2].follow_interval",
            "must be at least 1 second (got \"500ms\")",
        );
        let exactly_one = one_agent("follow_interval = \"1000ms\"");
        assert_eq!(
            parse(&exactly_one).unwrap().agents[0].follow_interval,
            Duration::from_secs(1)
        );
    }

    #[test]
    fn follow_interval_must_be_a_duration() {
        assert_only_error(
            &one_agent("follow_interval = \"PT5S\""),
            "agents[0].follow_interval",
            "\"PT5S\" is not a duration: use whole numbers with the units h, m, s or ms, \
             largest first, such as \"5s\", \"250ms\" or \"1m30s\"",
        );
        assert_only_error(
            &one_agent("follow_interval = 5"),
            "agents[0].follow_interval",
            "must be a duration like \"5s\" (got an integer)",
        );
    }

    #[test]
    fn self_is_reserved() {
        assert_only_error(
            "agents = [{ id = \"self\", url = \"https://me.example.com\" }]",
            "agents[0].id",
            "the id self is reserved for this agent itself: `agent: null` delegates to it",
        );
    }

    #[test]
    fn ids_are_unique() {
        assert_only_error(
            "agents = [\n  { id = \"x\", url = \"https://a.example.com\" },\n  \
             { id = \"y\", url = \"https://b.example.com\" },\n  \
             { id = \"x\", url = \"https://c.example.com\" },\n]",
            "agents[2].id",
            "duplicate id \"x\" (also agents[0])",
        );
    }

    #[test]
    fn id_is_required_and_not_blank() {
        assert_only_error(
            "agents = [{ url = \"https://a.example.com\" }]",
            "agents[0].id",
            "required (a string like \"ledger\")",
        );
        assert_only_error(
            "agents = [{ id = \"  \", url = \"https://a.example.com\" }]",
            "agents[0].id",
            "must not be blank",
        );
        assert_only_error(
            "agents = [{ id = 3, url = \"https://a.example.com\" }]",
            "agents[0].id",
            "must be a string like \"ledger\" (got an integer)",
        );
    }

    #[test]
    fn id_must_match_the_pattern() {
        for bad in ["led ger", ".ledger", "a/b", &"x".repeat(64)] {
            assert_only_error(
                &format!("agents = [{{ id = {bad:?}, url = \"https://a.example.com\" }}]"),
                "agents[0].id",
                &format!(
                    "must match ^[A-Za-z0-9][A-Za-z0-9._-]{{0,62}}$: letters, digits, '.', '_' and '-', \
                     starting with a letter or digit, at most 63 characters (got {bad:?})"
                ),
            );
        }
    }

    #[test]
    fn url_is_required() {
        assert_only_error(
            "agents = [{ id = \"ledger\" }]",
            "agents[0].url",
            "required (a string like \"https://ledger.example.com\")",
        );
    }

    #[test]
    fn url_must_be_absolute_http_or_https() {
        for bad in [
            "ledger.example.com",
            "localhost:8080",
            "ftp://ledger.example.com",
            "/a2a",
            "http://",
            "",
        ] {
            assert_only_error(
                &format!("agents = [{{ id = \"ledger\", url = {bad:?} }}]"),
                "agents[0].url",
                &format!(
                    "must be an absolute http or https URL like \"https://ledger.example.com\" (got {bad:?})"
                ),
            );
        }
    }

    #[test]
    fn url_must_not_have_query_or_fragment() {
        for bad in [
            "https://ledger.example.com/?tenant=1",
            "https://ledger.example.com/#card",
        ] {
            assert_only_error(
                &format!("agents = [{{ id = \"ledger\", url = {bad:?} }}]"),
                "agents[0].url",
                &format!("must not have a query or fragment (got {bad:?})"),
            );
        }
    }

    #[test]
    fn version_must_not_be_blank() {
        assert_only_error(
            &one_agent("version = \"\""),
            "agents[0].version",
            "must not be blank; leave it out to keep the default",
        );
    }

    #[test]
    fn agents_must_be_an_array_of_tables() {
        assert_only_error(
            "[agents]\nid = \"ledger\"",
            "agents",
            "must be an array of tables like agents = [{ id = \"ledger\", url = \"https://ledger.example.com\" }] (got a table)",
        );
        assert_only_error(
            "agents = [\"ledger\"]",
            "agents[0]",
            "must be a table like { id = \"ledger\", url = \"https://ledger.example.com\" } (got a string)",
        );
    }

    #[test]
    fn unknown_key_is_refused() {
        assert_only_error(
            &one_agent("push = true"),
            "agents[0].push",
            "unknown setting (allowed: id, url, version, updates, follow_interval, push_safety_fetch, \
             create_timeout, listing_wait, deadline, allow_other_origin, auth)",
        );
    }

    #[test]
    fn errors_in_several_agents_are_all_reported() {
        let errors = errors_of(parse(
            "agents = [\n  { id = \"self\", url = \"https://a.example.com\" },\n  \
             { id = \"b\", url = \"nope\", updates = \"never\" },\n]",
        ));
        assert_eq!(
            errors,
            vec![
                (
                    "agents[0].id".to_owned(),
                    "the id self is reserved for this agent itself: `agent: null` delegates to it".to_owned()
                ),
                (
                    "agents[1].url".to_owned(),
                    "must be an absolute http or https URL like \"https://ledger.example.com\" (got \"nope\")"
                        .to_owned()
                ),
                (
                    "agents[1].updates".to_owned(),
                    "must be \"auto\", \"follow\" or \"off\" (got \"never\")".to_owned()
                ),
            ]
        );
    }
}
