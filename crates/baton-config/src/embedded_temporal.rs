//! `[temporal.embedded]`: the Temporal dev server Baton starts itself, and its storage.

use std::path::{Path, PathBuf};

use crate::error::Errors;
use crate::walk::Field;

/// `[temporal.embedded]`: the Temporal dev server Baton starts itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedTemporal {
    /// The `temporal` CLI. A bare name is looked up on `PATH` when the server starts;
    /// a path with a slash has been resolved against the settings file's directory.
    pub binary: PathBuf,
    /// The SQLite file the dev server persists to, resolved against the settings file's
    /// directory.
    pub database: PathBuf,
    /// The frontend gRPC port; 0 picks a free port when starting.
    pub port: u16,
    /// The Web UI port; 0 picks a free port when starting.
    pub ui_port: u16,
    /// When the dev server's SQLite file is synced to disk (`sqlite_sync`).
    pub sqlite_sync: SqliteSync,
}

/// `temporal.embedded.sqlite_sync`. Both keep SQLite's write-ahead log; they differ in when
/// it reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqliteSync {
    /// Synced at checkpoints, not on every commit: a crash of Baton or of the server loses
    /// nothing; a power loss or a kernel crash may lose the last commits. Several times the
    /// throughput of `Full` on an ordinary disk.
    Normal,
    /// Synced on every commit: nothing committed is lost, even to a power loss.
    Full,
}

impl SqliteSync {
    const CHOICES: [(&'static str, SqliteSync); 2] =
        [("normal", SqliteSync::Normal), ("full", SqliteSync::Full)];

    /// The value of SQLite's `synchronous` pragma.
    pub fn pragma_value(self) -> &'static str {
        match self {
            SqliteSync::Normal => "normal",
            SqliteSync::Full => "full",
        }
    }
}

const KEYS: [&str; 5] = ["binary", "database", "port", "ui_port", "sqlite_sync"];
const DEFAULT_BINARY: &str = "temporal";
const DEFAULT_PORT: u16 = 7233;
const DEFAULT_UI_PORT: u16 = 8233;

pub(crate) fn read(
    field: Field<'_>,
    agent_id: &str,
    base_dir: &Path,
    errors: &mut Errors,
) -> EmbeddedTemporal {
    let section = field.section("a table like [temporal.embedded]", errors);
    section.refuse_unknown(&KEYS, errors);
    let binary = section
        .field("binary")
        .optional_text("a string like \"temporal\" or \"bin/temporal\"", errors)
        .unwrap_or(DEFAULT_BINARY);
    let database = match section
        .field("database")
        .optional_text("a string like \"state/temporal.sqlite\"", errors)
    {
        Some(path) => base_dir.join(path),
        None => base_dir
            .join(".baton")
            .join(agent_id)
            .join("temporal.sqlite"),
    };
    let port_field = section.field("port");
    let ui_port_field = section.field("ui_port");
    let port = read_port(&port_field, DEFAULT_PORT, errors);
    let ui_port = read_port(&ui_port_field, DEFAULT_UI_PORT, errors);
    if let (Some(port), Some(ui_port)) = (port, ui_port)
        && port == ui_port
        && port != 0
    {
        ui_port_field.fail(
            errors,
            format!(
                "must differ from {} (both are {port}); 0 picks a free port",
                port_field.path()
            ),
        );
    }
    let sqlite_sync = section
        .field("sqlite_sync")
        .choice(&SqliteSync::CHOICES, errors)
        .unwrap_or(SqliteSync::Normal);
    EmbeddedTemporal {
        binary: resolve_binary(binary, base_dir),
        database,
        port: port.unwrap_or(DEFAULT_PORT),
        ui_port: ui_port.unwrap_or(DEFAULT_UI_PORT),
        sqlite_sync,
    }
}

/// A bare name stays as it is, to be looked up on `PATH` when the server starts.
fn resolve_binary(binary: &str, base_dir: &Path) -> PathBuf {
    if binary.contains('/') {
        base_dir.join(binary)
    } else {
        PathBuf::from(binary)
    }
}

/// `default` when absent; `None` when the value is not a port number.
fn read_port(field: &Field<'_>, default: u16, errors: &mut Errors) -> Option<u16> {
    const EXPECTED: &str = "a port number from 0 to 65535";
    let Some(number) = field.integer(EXPECTED, errors) else {
        return (!field.is_set()).then_some(default);
    };
    let port = u16::try_from(number).ok();
    if port.is_none() {
        field.fail(errors, format!("must be {EXPECTED} (got {number})"));
    }
    port
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{EmbeddedTemporal, SqliteSync};
    use crate::test_support::*;

    #[test]
    fn defaults_keep_the_database_in_the_state_directory() {
        assert_eq!(
            parse("").unwrap().temporal.embedded,
            EmbeddedTemporal {
                binary: PathBuf::from("temporal"),
                database: Path::new(BASE_DIR).join(".baton/baton/temporal.sqlite"),
                port: 7233,
                ui_port: 8233,
                sqlite_sync: SqliteSync::Normal,
            }
        );
    }

    #[test]
    fn sqlite_sync_is_normal_or_full() {
        let sync = |toml: &str| parse(toml).unwrap().temporal.embedded.sqlite_sync;
        assert_eq!(
            sync("[temporal.embedded]\nsqlite_sync = \"full\""),
            SqliteSync::Full
        );
        assert_eq!(
            sync("[temporal.embedded]\nsqlite_sync = \"normal\""),
            SqliteSync::Normal
        );
        assert_only_error(
            "[temporal.embedded]\nsqlite_sync = \"off\"",
            "temporal.embedded.sqlite_sync",
            "must be \"normal\" or \"full\" (got \"off\")",
        );
    }

    #[test]
    fn default_database_follows_the_agent_id() {
        assert_eq!(
            parse("[agent]\nid = \"ledger\"")
                .unwrap()
                .temporal
                .embedded
                .database,
            Path::new(BASE_DIR).join(".baton/ledger/temporal.sqlite")
        );
    }

    #[test]
    fn relative_paths_resolve_against_the_settings_directory() {
        let embedded =
            parse("[temporal.embedded]\nbinary = \"bin/temporal\"\ndatabase = \"state/t.sqlite\"")
                .unwrap()
                .temporal
                .embedded;
        assert_eq!(embedded.binary, Path::new(BASE_DIR).join("bin/temporal"));
        assert_eq!(
            embedded.database,
            Path::new(BASE_DIR).join("state/t.sqlite")
        );
        let dotted = parse("[temporal.embedded]\nbinary = \"./temporal\"").unwrap();
        assert_eq!(
            dotted.temporal.embedded.binary,
            Path::new(BASE_DIR).join("./temporal")
        );
    }

    #[test]
    fn absolute_paths_are_kept() {
        let embedded = parse(
            "[temporal.embedded]\nbinary = \"/opt/temporal/bin/temporal\"\n\
             database = \"/var/lib/baton/t.sqlite\"",
        )
        .unwrap()
        .temporal
        .embedded;
        assert_eq!(embedded.binary, PathBuf::from("/opt/temporal/bin/temporal"));
        assert_eq!(embedded.database, PathBuf::from("/var/lib/baton/t.sqlite"));
    }

    #[test]
    fn a_bare_binary_name_is_left_for_the_path_lookup() {
        let embedded = parse("[temporal.embedded]\nbinary = \"temporal-2\"")
            .unwrap()
            .temporal
            .embedded;
        assert_eq!(embedded.binary, PathBuf::from("temporal-2"));
    }

    #[test]
    fn paths_must_not_be_blank() {
        for key in ["binary", "database"] {
            assert_only_error(
                &format!("[temporal.embedded]\n{key} = \"\""),
                &format!("temporal.embedded.{key}"),
                "must not be blank; leave it out to keep the default",
            );
        }
        assert_only_error(
            "[temporal.embedded]\ndatabase = 1",
            "temporal.embedded.database",
            "must be a string like \"state/temporal.sqlite\" (got an integer)",
        );
    }

    #[test]
    fn ports_are_read_and_zero_means_any_free_port() {
        let embedded = parse("[temporal.embedded]\nport = 0\nui_port = 0")
            .unwrap()
            .temporal
            .embedded;
        assert_eq!((embedded.port, embedded.ui_port), (0, 0));
        let embedded = parse("[temporal.embedded]\nport = 65535\nui_port = 1")
            .unwrap()
            .temporal
            .embedded;
        assert_eq!((embedded.port, embedded.ui_port), (65535, 1));
    }

    #[test]
    fn ports_must_be_port_numbers() {
        for (key, bad) in [("port", "65536"), ("ui_port", "-1")] {
            assert_only_error(
                &format!("[temporal.embedded]\n{key} = {bad}"),
                &format!("temporal.embedded.{key}"),
                &format!("must be a port number from 0 to 65535 (got {bad})"),
            );
        }
        assert_only_error(
            "[temporal.embedded]\nport = \"7233\"",
            "temporal.embedded.port",
            "must be a port number from 0 to 65535 (got a string)",
        );
    }

    #[test]
    fn ports_must_differ_unless_both_are_zero() {
        assert_only_error(
            "[temporal.embedded]\nport = 9000\nui_port = 9000",
            "temporal.embedded.ui_port",
            "must differ from temporal.embedded.port (both are 9000); 0 picks a free port",
        );
        assert_only_error(
            "[temporal.embedded]\nui_port = 7233",
            "temporal.embedded.ui_port",
            "must differ from temporal.embedded.port (both are 7233); 0 picks a free port",
        );
    }

    #[test]
    fn a_bad_port_is_not_also_reported_as_a_clash() {
        assert_only_error(
            "[temporal.embedded]\nport = 99999\nui_port = 7233",
            "temporal.embedded.port",
            "must be a port number from 0 to 65535 (got 99999)",
        );
    }

    #[test]
    fn unknown_key_is_refused() {
        assert_only_error(
            "[temporal.embedded]\npersist = true",
            "temporal.embedded.persist",
            "unknown setting (allowed: binary, database, port, ui_port, sqlite_sync)",
        );
    }
}
