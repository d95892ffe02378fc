//! docs/configuration.md is the configuration reference: every key its tables list must be a key
//! the parser accepts, and every key the parser accepts must be listed. The parser says which
//! keys it accepts when it refuses an unknown one ("unknown setting (allowed: …)").

use std::collections::BTreeSet;
use std::path::Path;

use baton_config::Settings;

/// For each key table of the reference, in order: the table's name on the page, a TOML document
/// that puts `{key}` in that table, and where the table sits in the JSON Schema (`[]` marks an
/// array of tables). The last table of the page lists environment variables, not keys.
const PROBES: [(&str, &str, &str); 19] = [
    ("[agent]", "[agent]\n{key} = 1", "agent"),
    ("[prompt]", "[prompt]\n{key} = 1", "prompt"),
    (
        "agents",
        "agents = [{ id = \"a\", url = \"https://a.example.com\", {key} = 1 }]",
        "agents[]",
    ),
    (
        "agents[].auth",
        "agents = [{ id = \"a\", url = \"https://a.example.com\", auth = { {key} = 1 } }]",
        "agents[].auth",
    ),
    (
        "[[mcp]]",
        "[[mcp]]\nid = \"m\"\ncommand = \"m\"\n{key} = 1",
        "mcp[]",
    ),
    ("[server]", "[server]\n{key} = 1", "server"),
    ("[server.auth]", "[server.auth]\n{key} = 1", "server.auth"),
    (
        "[[server.auth.tokens]]",
        "[[server.auth.tokens]]\n{key} = 1",
        "server.auth.tokens[]",
    ),
    (
        "[server.auth.oidc]",
        "[server.auth.oidc]\n{key} = 1",
        "server.auth.oidc",
    ),
    ("[card]", "[card]\n{key} = 1", "card"),
    (
        "[[card.skills]]",
        "[[card.skills]]\nid = \"s\"\nname = \"S\"\n{key} = 1",
        "card.skills[]",
    ),
    ("[temporal]", "[temporal]\n{key} = 1", "temporal"),
    (
        "[temporal.embedded]",
        "[temporal.embedded]\n{key} = 1",
        "temporal.embedded",
    ),
    ("[model]", "[model]\n{key} = 1", "model"),
    ("[content]", "[content]\n{key} = 1", "content"),
    ("[metrics]", "[metrics]\n{key} = 1", "metrics"),
    ("[health]", "[health]\n{key} = 1", "health"),
    ("[log]", "[log]\n{key} = 1", "log"),
    ("[trace]", "[trace]\n{key} = 1", "trace"),
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
    for ((section, probe, _), documented) in PROBES.iter().zip(&tables) {
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

// The JSON Schema of baton.toml, generated from the parser: each table's keys are the ones it
// accepts, each key's types the ones it does not refuse as the wrong type, each description the
// reference's. docs/schemas/baton.schema.json must be what this generates (regenerate it with
// BATON_WRITE_SCHEMA=1 cargo test -p baton-config --test reference).

/// A TOML value of each type, and how the parser names that type when it refuses it.
const SAMPLES: [(&str, &str, &str); 6] = [
    ("\"x\"", "a string", "string"),
    ("1", "an integer", "integer"),
    ("1.5", "a float", "number"),
    ("true", "a boolean", "boolean"),
    ("[]", "an array", "array"),
    ("{}", "a table", "object"),
];

/// `probe` with `{key}` set to `value`, and any other setting of `key` in it taken out.
fn with_value(probe: &str, key: &str, value: &str) -> String {
    let mut text = probe.to_string();
    let assignment = format!("{key} = \"");
    while let Some(start) = text.find(&assignment) {
        let is_key = start == 0 || !text.as_bytes()[start - 1].is_ascii_alphanumeric();
        let value_start = start + assignment.len();
        let Some(length) = text[value_start..].find('"') else {
            break;
        };
        if !is_key {
            break;
        }
        let mut end = value_start + length + 1;
        if text[end..].starts_with(", ") || text[end..].starts_with('\n') {
            end += if text[end..].starts_with(", ") { 2 } else { 1 };
        }
        text.replace_range(start..end, "");
    }
    text.replace("{key} = 1", &format!("{key} = {value}"))
}

/// The JSON types the parser takes for `key` of the table `probe` puts it in.
fn accepted_types(probe: &str, key: &str) -> Vec<&'static str> {
    SAMPLES
        .iter()
        .filter(|(value, parser_name, _)| {
            let text = with_value(probe, key, value);
            let Err(error) = Settings::parse(&text, Path::new("/srv"), &|_| None) else {
                return true;
            };
            !error.errors.iter().any(|e| {
                (e.setting == key || e.setting.ends_with(&format!(".{key}")))
                    && e.message.ends_with(&format!("(got {parser_name})"))
            })
        })
        .map(|(_, _, json)| *json)
        .collect()
}

/// The reference's rows of each table, in the page's order: key → its default and what is
/// allowed.
fn documented_rows() -> Vec<std::collections::BTreeMap<String, String>> {
    let page = page();
    let mut tables = Vec::new();
    let mut current = std::collections::BTreeMap::new();
    for line in page.lines() {
        let row = line
            .strip_prefix("| `")
            .and_then(|rest| rest.split_once('`'));
        match row {
            Some((key, rest)) => {
                let cells: Vec<&str> = rest.split(" | ").map(str::trim).collect();
                let default = cells.get(1).copied().unwrap_or_default();
                let allowed = cells
                    .get(2)
                    .copied()
                    .unwrap_or_default()
                    .trim_end_matches(" |");
                current.insert(key.to_string(), format!("{allowed} (default: {default})"));
            }
            None if !current.is_empty() => tables.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    tables
}

fn generated_schema() -> serde_json::Value {
    use serde_json::{Map, Value, json};
    let rows = documented_rows();
    let tables: Vec<(&str, &str, std::collections::BTreeMap<String, String>)> = PROBES
        .iter()
        .zip(rows)
        .map(|((_, probe, node), rows)| (*probe, *node, rows))
        .collect();
    fn node_schema(
        node: &str,
        probe: &str,
        rows: &std::collections::BTreeMap<String, String>,
        tables: &[(&str, &str, std::collections::BTreeMap<String, String>)],
    ) -> Value {
        let mut properties = Map::new();
        for key in accepted_keys(probe) {
            let path = if node.is_empty() {
                key.clone()
            } else {
                format!("{node}.{key}")
            };
            let child = tables
                .iter()
                .find(|(_, other, _)| *other == path || *other == format!("{path}[]"));
            let mut schema = match child {
                Some((child_probe, child_node, child_rows)) => {
                    let table = node_schema(child_node, child_probe, child_rows, tables);
                    if child_node.ends_with("[]") {
                        json!({"type": "array", "items": table})
                    } else {
                        table
                    }
                }
                None => {
                    // A key the parser reads only beside others (an OAuth client's id, an
                    // MCP server's URL) refuses no type in a probe of its own: its type is left
                    // open rather than guessed.
                    let types = accepted_types(probe, &key);
                    match types.as_slice() {
                        [one] => json!({"type": one}),
                        all if all.len() == SAMPLES.len() => json!({}),
                        many => json!({"type": many}),
                    }
                }
            };
            if let Some(description) = rows.get(&key) {
                schema["description"] = json!(description);
            }
            properties.insert(key, schema);
        }
        json!({"type": "object", "additionalProperties": false, "properties": properties})
    }
    let mut top_level = node_schema("", "{key} = 1", &Default::default(), &tables);
    // The keys of [prompt.replace] and [prompt.extend] are the sections the parser takes.
    let sections: Map<String, Value> = baton_core::system_prompt::SECTION_NAMES
        .iter()
        .map(|name| (name.to_string(), json!({"type": "string"})))
        .collect();
    for table in ["replace", "extend"] {
        let schema = &mut top_level["properties"]["prompt"]["properties"][table];
        schema["additionalProperties"] = json!(false);
        schema["properties"] = Value::Object(sections.clone());
    }
    let mut schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "baton.toml",
        "description": "Baton's settings file (docs/configuration.md). Generated from the parser by crates/baton-config/tests/reference.rs.",
    });
    for (key, value) in top_level.as_object().unwrap() {
        schema[key] = value.clone();
    }
    schema
}

#[test]
fn the_json_schema_is_the_one_the_parser_generates() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schemas/baton.schema.json");
    let generated = serde_json::to_string_pretty(&generated_schema()).unwrap() + "\n";
    if std::env::var_os("BATON_WRITE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/schemas/baton.schema.json is not what the parser generates; regenerate it with \
         BATON_WRITE_SCHEMA=1 cargo test -p baton-config --test reference"
    );
}

#[test]
fn the_schema_knows_each_key_s_types_from_the_parser() {
    let schema = generated_schema();
    let properties = &schema["properties"];
    assert_eq!(properties["agent"]["properties"]["id"]["type"], "string");
    assert_eq!(
        properties["model"]["properties"]["context_budget"]["type"],
        "integer"
    );
    assert_eq!(
        properties["temporal"]["properties"]["tls"]["type"],
        "boolean"
    );
    assert_eq!(properties["agents"]["type"], "array");
    assert_eq!(
        properties["agents"]["items"]["properties"]["auth"]["type"],
        "object"
    );
    assert_eq!(
        properties["prompt"]["properties"]["extend"]["type"],
        "object"
    );
    assert_eq!(schema["additionalProperties"], false);
    assert!(
        properties["agent"]["properties"]["instructions"]["description"]
            .as_str()
            .unwrap()
            .contains("what this agent is for")
    );
}
