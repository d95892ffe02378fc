#!/usr/bin/env bash
# The delegation example, end to end and offline: starts the example's fake model (model.py),
# then `baton up ledger.toml front-desk.toml` (one embedded Temporal dev server, two agents,
# two gateways), asks the front desk a question over A2A, prints the answer the ledger gave (and
# each file that came with it: ask for an order as a CSV) and the Web UI link, and stops
# everything.
#
#   bash examples/delegation/run.sh ["your question"]
#
# With BATON_MODEL_BASE_URL (and BATON_MODEL, BATON_MODEL_API_KEY) set, both agents use that
# OpenAI-compatible endpoint instead, and model.py is not started.
#
# It installs what it needs first (scripts/setup.sh: the Temporal CLI into .venv) and builds
# baton, unless BATON names a baton binary to use. The answer goes to stdout; progress to stderr.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
question="${1:-When did order 1042 ship?}"

# BATON, PATH, the scratch directory $work with the processes in pids, wait_for_line.
source "$root/scripts/baton-session.sh"

if [ -n "${BATON_MODEL_BASE_URL:-}" ]; then
  echo "== the model: ${BATON_MODEL:-the model each file names} at $BATON_MODEL_BASE_URL" >&2
else
  echo "== the example's model (model.py) on 127.0.0.1:8299" >&2
  python3 "$here/model.py" --port 8299 >"$work/model.log" 2>&1 &
  pids+=($!)
  wait_for_line "$work/model.log" ready
fi

echo "== baton up ledger.toml front-desk.toml" >&2
(cd "$here" && RUST_LOG="${RUST_LOG:-warn}" exec "$BATON" up ledger.toml front-desk.toml) \
  >"$work/baton.log" 2>&1 &
pids+=($!)
wait_for_line "$work/baton.log" "baton up:"
grep -E "^(agent|Web UI|metrics)" "$work/baton.log" >&2

echo "== asking the front desk: $question" >&2
request="$(python3 - "$question" <<'PY'
import json, sys, uuid
print(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
    "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": sys.argv[1]}]}}}))
PY
)"
response="$(curl -sS --max-time 120 http://127.0.0.1:8202/ \
  -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H 'X-Participant-Id: customer' \
  -d "$request")"
python3 - "$response" <<'PY'
import base64, json, sys
answer = json.loads(sys.argv[1])
if "error" in answer:
    sys.exit(f"error: the front desk refused: {answer['error']}")
task = answer["result"]["task"]
state = task["status"]["state"]
text = " ".join(p.get("text", "") for p in task["status"].get("message", {}).get("parts", []))
print(f"task {task['id']} ({state})", file=sys.stderr)
# curl activates no A2A extension, so the task completes with its answer (a client that speaks
# the status extension would get a conversation that parks awaiting its next message instead).
if state != "TASK_STATE_COMPLETED":
    sys.exit(f"error: the task ended {state}: {text}")
print(text)
# The answer's artifact comes first; each file the delegation made follows as an artifact of its
# own, its bytes in `raw`.
for artifact in task.get("artifacts", [])[1:]:
    for part in artifact["parts"]:
        if "raw" not in part:
            continue
        body = base64.b64decode(part["raw"])
        print(f"--- {part.get('filename', artifact.get('name'))} ({part.get('mediaType')}, "
              f"{len(body)} bytes, {artifact.get('description')})")
        if part.get("mediaType", "").startswith("text/"):
            print(body.decode("utf-8", "replace"), end="")
PY
echo "== in the Web UI: the front desk's TaskWorkflow, its RemoteTaskWorkflow child, and the ledger's own task" >&2
grep -E "^Web UI" "$work/baton.log" >&2
echo "== what the metrics endpoint counted (http://127.0.0.1:9464/metrics)" >&2
curl -sS --max-time 10 http://127.0.0.1:9464/metrics | grep -E "^baton_(delegations|model|tool)" >&2
