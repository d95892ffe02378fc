#!/usr/bin/env bash
# Baton's interop suite: Baton against the released packages of other A2A stacks, installed at
# pinned versions (tests/interop/package.json and package-lock.json: @a2a-js/sdk from npm;
# tests/interop/requirements-adk.txt: Google ADK from PyPI, into tests/interop/.venv-adk;
# tests/interop/requirements-maf.txt: Microsoft Agent Framework's A2A client and hosting, into
# .venv-maf; tests/interop/requirements-langgraph.txt: LangGraph's dev server, into
# .venv-langgraph). Each is tested as a client of Baton's gateway over every binding it speaks, at
# its defaults, and as an agent Baton delegates to, end to end. Prints a matrix; exits 1 if any
# cell fails.
#
#   bash scripts/interop.sh [--only a2a-js|adk|maf|langgraph]
#
# It uses the baton binary BATON_BIN names (default $CARGO_TARGET_DIR/debug/baton, else
# target/debug/baton: what scripts/test.sh built), and never builds one. It installs what is missing (the Temporal CLI through scripts/setup.sh, the
# npm packages, the ADK, MAF and LangGraph venvs) and skips what is there. Everything it starts listens on
# 127.0.0.1 at free ports and is stopped when it exits, failed or not. Logs: tests/interop/.work/
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
interop="$root/tests/interop"
export BATON_BIN="${BATON_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/baton}"

only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only="${2:-}"; shift 2 || { echo "error: --only needs a2a-js, adk, maf or langgraph" >&2; exit 2; } ;;
    --only=*) only="${1#--only=}"; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (use --only a2a-js|adk|maf|langgraph)" >&2; exit 2 ;;
  esac
done
case "$only" in ""|a2a-js|adk|maf|langgraph) ;; *) echo "error: --only takes a2a-js, adk, maf or langgraph, not $only" >&2; exit 2 ;; esac

if [ ! -x "$BATON_BIN" ]; then
  echo "error: no baton binary at $BATON_BIN (build one, or set BATON_BIN)" >&2
  exit 2
fi
[ -x "$root/.venv/bin/temporal" ] || bash "$root/scripts/setup.sh" >&2

if [ -z "$only" ] || [ "$only" = "a2a-js" ]; then
  command -v node >/dev/null || { echo "error: node (20 or newer) is needed for @a2a-js/sdk" >&2; exit 2; }
  # npm ci installs exactly package-lock.json; skipped while node_modules matches the lock.
  if ! cmp -s "$interop/package-lock.json" "$interop/node_modules/.package-lock.json.interop" 2>/dev/null; then
    echo "== npm ci (tests/interop)" >&2
    (cd "$interop" && npm ci --no-audit --no-fund --loglevel=error >&2)
    cp "$interop/package-lock.json" "$interop/node_modules/.package-lock.json.interop"
  fi
fi
# Each Python stack gets a venv of its own, installed from its requirements file and skipped
# while the file matches the one it was installed from.
for stack in adk maf langgraph; do
  if [ -n "$only" ] && [ "$only" != "$stack" ]; then continue; fi
  venv="$interop/.venv-$stack"
  stamp="$venv/.requirements-$stack.txt"
  if ! cmp -s "$interop/requirements-$stack.txt" "$stamp" 2>/dev/null; then
    echo "== pip install -r tests/interop/requirements-$stack.txt (into tests/interop/.venv-$stack)" >&2
    [ -x "$venv/bin/pip" ] || python3 -m venv --clear "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$interop/requirements-$stack.txt" >&2
    cp "$interop/requirements-$stack.txt" "$stamp"
  fi
done

# The runner stops everything it started in its own finally; this trap makes sure it gets the
# signal when this script does.
runner=""
trap '[ -n "$runner" ] && kill -TERM "$runner" 2>/dev/null; wait 2>/dev/null' INT TERM
python3 "$interop/run.py" ${only:+--only "$only"} &
runner=$!
set +e
wait "$runner"
code=$?
# A signal interrupts the first wait; wait again for the runner's own cleanup to finish.
while kill -0 "$runner" 2>/dev/null; do wait "$runner"; code=$?; done
exit "$code"
