#!/usr/bin/env bash
# Sets everything up and runs Baton on the embedded default: installs the Temporal CLI and the
# A2A SDK into .venv, builds baton, starts a real remote A2A agent (the "ledger", on the official
# Python a2a-sdk), checks its card and prints the roster the model sees, then starts the embedded
# Temporal dev server, prints the Web UI link, and stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cargo build --quiet -p baton-cli
baton="${CARGO_TARGET_DIR:-target}/debug/baton"
config=examples/quickstart/baton.toml
export PATH="$PWD/.venv/bin:$PATH"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# Wait until $2 prints a line starting with $3 into file $1, for at most 60 s.
wait_for_line() {
  for _ in $(seq 600); do
    grep -q "^$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "error: timed out waiting for '$2' in $1" >&2
  cat "$1" >&2
  return 1
}

logs=$(mktemp -d)
echo "== starting the ledger, a remote A2A agent on the Python a2a-sdk (port 8091)"
python tests/peers/a2a_peer.py --port 8091 --name Ledger \
  --description "Answers questions about customer orders." --skills 2 --push >"$logs/ledger.log" 2>&1 &
pids+=($!)
wait_for_line "$logs/ledger.log" ready

echo "== baton agents check --config $config"
"$baton" agents check --config "$config"

echo "== baton temporal serve --config $config"
"$baton" temporal serve --config "$config" >"$logs/temporal.log" 2>&1 &
pids+=($!)
wait_for_line "$logs/temporal.log" "Web UI"
grep -E "^(Temporal|Web UI)" "$logs/temporal.log"
echo "== the embedded Temporal server is ready; stopping everything"
