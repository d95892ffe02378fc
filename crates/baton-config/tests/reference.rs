//! docs/configuration.md is the configuration reference: every key its tables list must be a key
//! the parser accepts, and every key the parser accepts must be listed. The parser says which
//! keys it accepts when it refuses an unknown one ("unknown setting (allowed: …)").

use std::collections::BTreeSet;
use std::path::Path;

use baton_config::Settings;

/// For each key table of the reference, in order: a TOML document that puts `{key}` in that
/// table. The last table of the page lists environment variables, not keys.
const PROBES: [(&str, &str); 18] = [
    ("[agent]", "[agent]\n{key} = 1"),
    ("[prompt]", "[prompt]\n{key} = 1"),
    (
        "agents",
        "agents = [{ id = \"a\", url = \"https://a.example.com\", {key} = 1 }]",
    ),
    (
        "agents[].auth",
        "agents = [{ id = \"a\", url = \"https://a.example.com\", auth = { {key} = 1 } }]",
    ),
    ("[[mcp]]", "[[mcp]]\nid = \"m\"\ncommand = \"m\"\n{key} = 1"),
    ("[server]", "[server]\n{key} = 1"),
    ("[server.auth]", "[server.auth]\n{key} = 1"),
    (
        "[[server.auth.tokens]]",
        "[[server.auth.tokens]]\n{key} = 1",
    ),
    ("[server.auth.oidc]", "[server.auth.oidc]\n{key} = 1"),
    ("[card]", "[card]\n{key} = 1"),
    (
        "[[card.skills]]",
        "[[card.skills]]\nid = \"s\"\nname = \"S\"\n{key} = 1",
    ),
    ("[temporal]", "[temporal]\n{key} = 1"),
    ("[temporal.embedded]", "[temporal.embedded]\n{key} = 1"),
    ("[model]", "[model]\n{key} = 1"),
    ("[metrics]", "[metrics]\n{key} = 1"),
    ("[health]", "[health]\n{key} = 1"),
    ("[log]", "[log]\n{key} = 1"),
    ("[trace]", "[trace]\n{key} = 1"),
];

fn page() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/configuration.md"),
    )
    .unwrap()
}

/// The first-column keys of each table on the page, table by table.
fn documented_tables() -> Vec<BTreeSet<String>> {
    let page = page();
    let mut tables = Vec::new();
    let mut current = BTreeSet::new();
    for line in page.lines() {
        let key = line
            .strip_prefix("| `")
            .and_then(|rest| rest.split_once('`'))
            .map(|(key, _)| key.to_string());
        match key {
            Some(key) => {
                current.insert(key);
            }
            None if !current.is_empty() => tables.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        tables.push(current);
    }
    tables
}

/// The keys the parser accepts in a table, read from its refusal of an unknown key.
fn accepted_keys(probe: &str) -> BTreeSet<String> {
    let text = probe.replace("{key}", "no_such_key_here");
    let error = Settings::parse(&text, Path::new("/srv"), &|_| None)
        .expect_err("an unknown key is refused");
    let message = error
        .errors
        .iter()
        .map(|e| e.message.clone())
        .find(|m| m.starts_with("unknown setting"))
        .unwrap_or_else(|| panic!("no unknown-setting error for {probe:?}: {error}"));
    let list = message
        .split_once("(allowed: ")
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("no allowed list in {message:?}"));
    list.split(", ").map(str::to_string).collect()
}

#[test]
fn every_documented_key_is_accepted_and_every_accepted_key_is_documented() {
    let tables = documented_tables();
    assert_eq!(
        tables.len(),
        PROBES.len() + 1,
        "the page's key tables, then its environment variables: {tables:?}"
    );
    for ((section, probe), documented) in PROBES.iter().zip(&tables) {
        assert_eq!(
            &accepted_keys(probe),
            documented,
            "{section}: the parser's keys (left) and the reference's (right) differ"
        );
    }
    let sections = accepted_keys("{key} = 1");
    for section in &sections {
        let heading = |name: &str| page().contains(&format!("\n## `{name}`"));
        assert!(
            heading(&format!("[{section}]"))
                || heading(&format!("[[{section}]]"))
                || heading(section),
            "the top-level setting {section} has no section in the reference"
        );
    }
    let variables = tables.last().unwrap();
    assert_eq!(
        variables.iter().map(String::as_str).collect::<Vec<_>>(),
        [
            "BATON_CONFIG",
            "BATON_DEPLOYMENT_SECRET",
            "BATON_MODEL",
            "BATON_MODEL_API_KEY",
            "BATON_MODEL_BASE_URL",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "TEMPORAL_API_KEY"
        ]
    );
}
