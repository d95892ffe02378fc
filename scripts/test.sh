#!/usr/bin/env bash
# The whole test suite: formatting, lints, the dependency policy, then every unit and end-to-end
# test (the end-to-end tests start real Temporal dev servers and real Python a2a-sdk agents on
# 127.0.0.1), then the interop suite against the released a2a-js SDK and Google ADK.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# Licenses, duplicate versions and sources of every dependency (deny.toml).
cargo deny --locked check licenses bans sources
cargo test --workspace --locked
# Baton against the released clients and agents of other A2A stacks (docs/interop.md).
bash scripts/interop.sh
