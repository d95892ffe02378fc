# Sourced, with $root set to the checkout, by the scripts that run a real `baton up`
# (examples/delegation/run.sh, scripts/record-histories.sh). It:
# - sets BATON to a baton binary: the one BATON already names, or else it installs what the
#   scripts need (scripts/setup.sh: the Temporal CLI into .venv) and builds one;
# - puts .venv/bin on PATH;
# - makes a scratch directory, $work, and a list of background processes, pids, that it stops
#   (and removes $work) when the script exits.

if [ -z "${BATON:-}" ]; then
  bash "$root/scripts/setup.sh" >&2
  (cd "$root" && cargo build --quiet -p baton-cli)
  BATON="${CARGO_TARGET_DIR:-$root/target}/debug/baton"
fi
export PATH="$root/.venv/bin:$PATH"

work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Waits until file $1 has a line starting with $2, for at most 90 s; fails, showing the file,
# when the line does not come or the process started last exits first.
wait_for_line() {
  for _ in $(seq 900); do
    grep -q "^$2" "$1" 2>/dev/null && return 0
    if ! kill -0 "${pids[-1]}" 2>/dev/null; then break; fi
    sleep 0.1
  done
  echo "error: no '$2' in $1:" >&2
  cat "$1" >&2
  return 1
}
