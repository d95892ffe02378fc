#!/usr/bin/env bash
# The courier example, end to end and offline: Baton delegating to an agent of another A2A stack,
# which asks a question that a person answers.
#
# It installs the courier's one dependency (@a2a-js/sdk, pinned in package-lock.json, with npm
# ci), starts the courier (courier.mjs) and the example's fake model (model.py), then
# `baton up desk.toml` (an embedded Temporal dev server and the front desk's gateway). Then it
# plays the customer with `baton task send`:
#
#   1. asks the front desk what shipping an order costs; the front desk hands the question to
#      the courier, the courier asks which delivery speed, and the front desk, which may not
#      choose for the customer, asks them: the task waits INPUT_REQUIRED;
#   2. answers with `baton task send --task <id>` (ANSWER below, "Express, please." by default);
#      the front desk passes the answer on, and the courier's quote comes back.
#
#   bash examples/courier/run.sh ["your question" ["your answer"]]
#
# With BATON_MODEL_BASE_URL (and BATON_MODEL, BATON_MODEL_API_KEY) set, the front desk uses that
# OpenAI-compatible endpoint instead, and model.py is not started. It builds baton unless BATON
# names a binary. The quote goes to stdout; progress, the question and the answer to stderr.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
question="${1:-How much to ship order 1042 to Lyon?}"
answer="${2:-Express, please.}"
desk="http://127.0.0.1:8312"

# BATON, PATH, the scratch directory $work with the processes in pids, wait_for_line.
source "$root/scripts/baton-session.sh"

if [ ! -d "$here/node_modules/@a2a-js/sdk" ]; then
  echo "== npm ci (the courier's @a2a-js/sdk)" >&2
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
echo "== the courier, an @a2a-js/sdk agent, on 127.0.0.1:8311" >&2
node "$here/courier.mjs" --port 8311 >"$work/courier.log" 2>&1 &
pids+=($!)
wait_for_line "$work/courier.log" ready

if [ -n "${BATON_MODEL_BASE_URL:-}" ]; then
  echo "== the model: ${BATON_MODEL:-example-front-desk} at $BATON_MODEL_BASE_URL" >&2
else
  echo "== the example's model (model.py) on 127.0.0.1:8399" >&2
  python3 "$here/model.py" --port 8399 >"$work/model.log" 2>&1 &
  pids+=($!)
  wait_for_line "$work/model.log" ready
fi

echo "== baton up desk.toml" >&2
(cd "$here" && RUST_LOG="${RUST_LOG:-warn}" exec "$BATON" up desk.toml) >"$work/baton.log" 2>&1 &
pids+=($!)
wait_for_line "$work/baton.log" "baton up:"
grep -E "^(agent|Web UI)" "$work/baton.log" >&2

# The last line `baton task send --json` prints is the task; this says its id, its state with
# the sub-state Baton's status extension gives it (`awaiting-answer`: it asks the customer;
# `awaiting-next-message`: it answered and the conversation may go on), and its status message,
# one per line.
task_of() {
  tail -n 1 "$1" | python3 -c '
import json, sys
task = json.load(sys.stdin)["task"]
status = task["status"]
sub_state = next((v["sub_state"] for v in (task.get("metadata") or {}).values()
                  if isinstance(v, dict) and "sub_state" in v), "")
print(task["id"])
print((status["state"] + " " + sub_state).strip())
print(" ".join(p.get("text", "") for p in status.get("message", {}).get("parts", [])))'
}

echo "== the customer asks: $question" >&2
# `baton task send` follows the task until it ends or waits for the customer: bounded here, so a
# broken run stops with an error instead of hanging.
timeout 120 "$BATON" task send --url "$desk" --as customer --json "$question" >"$work/asked.jsonl"
{ read -r task_id; read -r state; read -r said; } < <(task_of "$work/asked.jsonl")
if [ "$state" != "TASK_STATE_INPUT_REQUIRED awaiting-answer" ]; then
  echo "error: the task is $state, not asking the customer: $said" >&2
  exit 1
fi
echo "== task $task_id waits for the customer, who is asked: $said" >&2

echo "== the customer answers: baton task send --task $task_id \"$answer\"" >&2
timeout 120 "$BATON" task send --url "$desk" --as customer --task "$task_id" --json "$answer" \
  >"$work/answered.jsonl"
{ read -r _; read -r state; read -r said; } < <(task_of "$work/answered.jsonl")
# `baton task` speaks Baton's status extension, so the answered task parks for the customer's
# next message rather than completing (docs/gateway.md).
if [ "$state" != "TASK_STATE_INPUT_REQUIRED awaiting-next-message" ] && [ "$state" != "TASK_STATE_COMPLETED" ]; then
  echo "error: the task is $state: $said" >&2
  exit 1
fi
echo "$said"
echo "== in the Web UI: the front desk's TaskWorkflow and its RemoteTaskWorkflow child, which watched the courier's task" >&2
grep -E "^Web UI" "$work/baton.log" >&2
