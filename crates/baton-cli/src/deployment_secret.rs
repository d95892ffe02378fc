//! The deployment secret a serving process runs with: `BATON_DEPLOYMENT_SECRET`, or in embedded
//! mode one kept beside the dev server's database (made on first start, readable by its owner
//! only), so a restarted worker opens what it sealed before and its gateway takes its own calls.
//! On a cluster every worker and gateway must share one, so there it must be set.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use baton_config::{DEPLOYMENT_SECRET_VARIABLE, Settings, TemporalMode};
use baton_core::deployment_key::DeploymentKey;

pub(crate) fn resolve(settings: &Settings) -> anyhow::Result<Arc<DeploymentKey>> {
    if let Some(secret) = &settings.server.auth.deployment_secret {
        return Ok(Arc::new(DeploymentKey::from_secret(secret.expose())));
    }
    match settings.temporal.mode {
        TemporalMode::Embedded => {
            let path = secret_file(&settings.temporal.embedded.database);
            let secret = read_or_create(&path)?;
            Ok(Arc::new(DeploymentKey::from_secret(&secret)))
        }
        TemporalMode::Remote => bail!(
            "{DEPLOYMENT_SECRET_VARIABLE} is not set: on a Temporal cluster every worker and \
             gateway of this agent must share one secret (it proves the agent's calls to itself \
             and seals webhook tokens in history). Set it to the same random value everywhere, \
             e.g. `openssl rand -hex 32`"
        ),
    }
}

/// Where embedded mode keeps its secret: beside the database, `<database>.deployment-secret`.
fn secret_file(database: &Path) -> PathBuf {
    let mut name = database.file_name().unwrap_or_default().to_os_string();
    name.push(".deployment-secret");
    database.with_file_name(name)
}

/// The secret in `path`, or a new one written there. Two processes starting at once agree: the
/// new secret is written whole to a file of its own and linked into place only if none is.
fn read_or_create(path: &Path) -> anyhow::Result<String> {
    if let Some(secret) = read(path)? {
        return Ok(secret);
    }
    let directory = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(directory)
        .with_context(|| format!("creating {}", directory.display()))?;
    let secret = baton_a2a::push::new_token();
    let mut draft = tempfile::Builder::new()
        .prefix(".deployment-secret")
        .tempfile_in(directory)
        .with_context(|| format!("writing a deployment secret in {}", directory.display()))?;
    draft.write_all(secret.as_bytes())?;
    draft.as_file().sync_all()?;
    // tempfile makes the file readable by its owner only.
    match std::fs::hard_link(draft.path(), path) {
        Ok(()) => {
            tracing::info!(path = %path.display(), "made this deployment's secret");
            Ok(secret)
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            read(path)?.with_context(|| format!("{} is empty", path.display()))
        }
        Err(error) => Err(error).with_context(|| format!("writing {}", path.display())),
    }
}

fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().len() >= 32 => Ok(Some(text.trim().to_string())),
        Ok(_) => bail!(
            "{} holds no usable deployment secret: delete it to make a new one, or set {DEPLOYMENT_SECRET_VARIABLE}",
            path.display()
        ),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn settings(toml: &str, env: &[(&str, &str)]) -> Settings {
        let env = |name: &str| {
            env.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        };
        Settings::parse(toml, Path::new("/tmp"), &env).unwrap()
    }

    #[test]
    fn embedded_mode_keeps_one_secret_beside_its_database_for_its_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("state/temporal.db");
        let toml = format!(
            "[temporal.embedded]\ndatabase = {:?}",
            database.display().to_string()
        );
        let first = resolve(&settings(&toml, &[])).unwrap();
        let again = resolve(&settings(&toml, &[])).unwrap();
        assert_eq!(first.self_call_token("a"), again.self_call_token("a"));
        let file = dir.path().join("state/temporal.db.deployment-secret");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        std::fs::write(&file, "short").unwrap();
        let error = resolve(&settings(&toml, &[])).unwrap_err().to_string();
        assert!(error.contains("no usable deployment secret"), "{error}");
    }

    #[test]
    fn the_variable_wins_and_a_cluster_needs_it() {
        let secret = "s".repeat(40);
        let from_env = resolve(&settings(
            "[temporal]\nmode = \"remote\"\naddress = \"temporal:7233\"",
            &[(DEPLOYMENT_SECRET_VARIABLE, &secret)],
        ))
        .unwrap();
        assert_eq!(
            from_env.self_call_token("a"),
            DeploymentKey::from_secret(&secret).self_call_token("a")
        );
        let error = resolve(&settings(
            "[temporal]\nmode = \"remote\"\naddress = \"temporal:7233\"",
            &[],
        ))
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("BATON_DEPLOYMENT_SECRET is not set"),
            "{error}"
        );
    }
}
