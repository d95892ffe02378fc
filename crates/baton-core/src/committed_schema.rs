//! The check that a tool's parameter schema, as the code builds it, is the one committed in
//! `docs/schemas/`, which users read. Set `UPDATE_SCHEMAS=1` to rewrite the committed files.

use serde_json::Value;

/// Asserts that `docs/schemas/<file>` holds `schema`, pretty-printed, or rewrites it when
/// `UPDATE_SCHEMAS` is set. `built_by` names the function that builds it, for the message.
pub fn check(file: &str, built_by: &str, schema: &Value) {
    let path = format!("{}/../../docs/schemas/{file}", env!("CARGO_MANIFEST_DIR"));
    let rendered = serde_json::to_string_pretty(schema).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &rendered).unwrap_or_else(|e| panic!("write {path}: {e}"));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == rendered,
        "docs/schemas/{file} differs from {built_by}(); regenerate it with \
         `UPDATE_SCHEMAS=1 cargo test -p baton-core` and commit it.\nexpected:\n{rendered}"
    );
}
