#!/usr/bin/env bash
# The whole test suite: formatting, lints, then every unit and end-to-end test (the end-to-end
# tests start real Temporal dev servers and real Python a2a-sdk agents on 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
