#!/usr/bin/env bash
# Records the workflow histories that `baton replay` replays in the tests (tests/histories/):
# - from a run of the delegation example on a fresh dev server, a conversation with the front
#   desk that delegates to the ledger, takes a second message, then is cancelled, and a task
#   opened by a `returnImmediately` SendMessage (the `first_message` signal) that runs to its
#   end: every TaskWorkflow and RemoteTaskWorkflow of that run, named by what it is;
# - from three push tests (crates/baton-cli/tests/e2e/engine_push.rs), a push-watched delegation
#   that completes, one whose parent is cancelled, and a stand-in that continued as new.
#
#   bash scripts/record-histories.sh tests/histories/<N>
#
# Record a new generation N for each release that changes what the workflows record (behind a
# patch): the older generations stay, as histories that every later version must still replay
# (docs/operating.md, "Upgrades").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -ne 1 ]; then
  echo "usage: bash scripts/record-histories.sh tests/histories/<N>" >&2
  exit 2
fi
mkdir -p "$1"
out="$(cd "$1" && pwd)"

# BATON, PATH, the scratch directory $work with the processes in pids, wait_for_line.
source "$root/scripts/baton-session.sh"
cp "$root"/examples/delegation/{ledger.toml,front-desk.toml,model.py,orders.json,orders_mcp.py} "$work"

python3 "$work/model.py" --port 8299 >"$work/model.log" 2>&1 &
pids+=($!)
(cd "$work" && RUST_LOG=warn exec "$BATON" up ledger.toml front-desk.toml) >"$work/baton.log" 2>&1 &
pids+=($!)
wait_for_line "$work/baton.log" "baton up:"

desk=(--url http://127.0.0.1:8202 --as customer)
task="$("$BATON" task send "${desk[@]}" --json "When did order 1042 ship?" \
  | python3 -c 'import json, sys; print(json.loads(sys.stdin.readlines()[-1])["task"]["id"])')"
"$BATON" task send "${desk[@]}" --task "$task" "What did order 1043 cost?" >&2
"$BATON" task cancel "${desk[@]}" "$task" >&2

# A task opened without waiting (signal-with-start), read until it has ended.
rpc() {
  curl -sf http://127.0.0.1:8202/ -H 'A2A-Version: 1.0' -H 'X-Participant-Id: customer' \
    -H 'content-type: application/json' -d "$1"
}
opened="$(rpc '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
  "message": {"messageId": "opened-1", "role": "ROLE_USER", "parts": [{"text": "When did order 1043 ship?"}]},
  "configuration": {"returnImmediately": true}}}' \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["result"]["task"]["id"])')"
for _ in $(seq 120); do
  state="$(rpc "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"GetTask\", \"params\": {\"id\": \"$opened\"}}" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["result"]["status"]["state"])')"
  case "$state" in TASK_STATE_COMPLETED|TASK_STATE_FAILED|TASK_STATE_CANCELED) break ;; esac
  sleep 0.5
done
echo "the opened task $opened ended $state" >&2

saved="$work/saved"
for agent in front-desk ledger; do
  (cd "$work" && "$BATON" replay --config "$agent.toml" \
    --query "TaskQueue = \"$agent\"" --save "$saved/$agent") >&2
done
# Names that say what each history is, in the order the workflows started.
python3 - "$saved" "$out" "$task" "$opened" <<'PY'
import json, pathlib, shutil, sys
saved, out, task, opened = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3], sys.argv[4]
def started(path):
    return json.loads(path.read_text())["events"][0]["event_time"]
shutil.copy(saved / "front-desk" / f"{task}.json", out / "front-desk-conversation.json")
shutil.copy(saved / "front-desk" / f"{opened}.json", out / "front-desk-opened.json")
stand_ins = sorted((saved / "front-desk").glob(f"{task}.*.json"), key=started)
ledger = sorted((saved / "ledger").glob("*.json"), key=started)
for name, paths in (("front-desk-stand-in", stand_ins), ("ledger-task", ledger)):
    for n, path in enumerate(paths, 1):
        shutil.copy(path, out / f"{name}-{n}.json")
print(f"recorded {2 + len(stand_ins) + len(ledger)} histories in {out}", file=sys.stderr)
PY

(cd "$root" && BATON_RECORD_HISTORIES="$out" cargo test --quiet -p baton-cli --test e2e -- \
  a_pushed_completion_reaches_the_parent_and_the_push_config_is_deleted \
  a_cancelled_push_watched_delegation_deletes_its_push_config_and_refuses_pushes \
  a_push_watched_stand_in_continues_as_new_and_keeps_accepting_its_token) >&2
echo "recorded the push tests' histories in $out" >&2
