#!/usr/bin/env bash
# The whole test suite: formatting, lints, the dependency policy, then every unit and end-to-end
# test (the end-to-end tests start real Temporal dev servers and real Python a2a-sdk agents on
# 127.0.0.1), then the interop suite against the released a2a-js SDK and Google ADK.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# What only the tests use, so the examples need neither: promtool (Debian's prometheus
# package) checks the shipped alert rules, cargo-deny the dependency policy (deny.toml).
# cargo-deny is built from crates.io once.
if ! command -v cargo-deny >/dev/null || ! cargo deny --version | grep -q "^cargo-deny 0.20.2$"; then
  cargo install --locked --quiet cargo-deny@0.20.2
fi
if ! command -v promtool >/dev/null; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    echo "error: promtool is missing: install Debian's prometheus package (apt-get install prometheus)" >&2
    exit 1
  fi
fi
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# Licenses, duplicate versions and sources of every dependency (deny.toml).
cargo deny --locked check licenses bans sources
cargo test --workspace --locked
# Baton against the released clients and agents of other A2A stacks (docs/interop.md).
bash scripts/interop.sh
