//! Rolling deploys: a newer Baton may write a field today's does not know, and a worker of
//! today must still read it. Every internal type (everything but `table::STRICT`) ignores an
//! unknown field; `fixtures/newer_writer/<Type>.json` is such JSON for each, every field of
//! today set, and each must read keeping every field of today.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::{CONTRACT, json, sample, table};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/newer_writer");

fn internal_types() -> BTreeSet<&'static str> {
    table::MESSAGES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !table::STRICT.contains(name))
        .collect()
}

#[test]
fn an_internal_type_reads_a_newer_writers_json_keeping_every_field_it_knows() {
    let mut failures = Vec::new();
    for name in internal_types() {
        let path = Path::new(FIXTURES).join(format!("{name}.json"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            failures.push(format!("{name}: no fixture {}", path.display()));
            continue;
        };
        let fixture: Value = serde_json::from_str(&text).expect("a fixture is JSON");
        let descriptor = json::message(name);
        if json::read(&descriptor, &fixture, false).is_ok() {
            failures.push(format!("{name}: the fixture has no field the schema lacks"));
        }
        if table::tagged(name).is_none() {
            for field in descriptor.fields() {
                if fixture.get(field.name()).is_none() {
                    failures.push(format!("{name}: the fixture leaves out {}", field.name()));
                }
            }
        }
        // What today's schema knows of it, and what serde keeps of it.
        let known =
            json::write(&json::read(&descriptor, &fixture, true).expect("the schema reads it"));
        match table::round_trip(name)(&fixture) {
            Err(e) => failures.push(format!("{name}: serde refuses it: {e}")),
            Ok(back) if !json::same(&known, &back) => failures.push(format!(
                "{name}: serde does not keep every known field:\n  known: {known}\n  serde: {back}"
            )),
            Ok(_) => {}
        }
    }
    let files: BTreeSet<String> = std::fs::read_dir(FIXTURES)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let expected: BTreeSet<String> = internal_types()
        .iter()
        .map(|n| format!("{n}.json"))
        .collect();
    assert_eq!(
        files, expected,
        "one fixture per internal type, and no other"
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn a_strict_type_refuses_an_unknown_field() {
    for name in table::STRICT {
        let mut written = json::write(&sample::full(&json::message(name)));
        written["added_later"] = json!({"by": "a newer release"});
        let error = table::round_trip(name)(&written).expect_err(name);
        assert!(
            error.contains("added_later") || *name == "AcceptanceCriterion",
            "{name}: {error}"
        );
    }
}

#[test]
fn the_contract_lists_the_strict_types() {
    let conventions = CONTRACT
        .split_once("## Conventions")
        .expect("a Conventions section")
        .1;
    let list = conventions
        .split_once("refuse unknown fields:")
        .expect("the list of strict types")
        .1;
    let list = list
        .split_once('.')
        .expect("the list ends with a full stop")
        .0;
    let listed: BTreeSet<&str> = list.split('`').skip(1).step_by(2).collect();
    let strict: BTreeSet<&str> = table::STRICT.iter().copied().collect();
    assert_eq!(listed, strict, "docs/contract.md, Conventions");
}
