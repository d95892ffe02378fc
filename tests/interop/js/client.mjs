// The released @a2a-js/sdk client against an A2A agent (Baton's gateway), over one binding, at
// the SDK's defaults: nothing Baton-specific is configured or sent (no X-Participant-Id, no
// credential, no extension). It resolves the card with ClientFactory.createFromUrl, preferring
// the binding asked for, and runs:
//
//   card     the card resolves and the factory picks an interface of that binding
//   send     a blocking sendMessage (COMPLETED), one with a CSV file beside its text
//            (COMPLETED), and a non-blocking one (polling: true, so returnImmediately) that
//            answers with the task
//   stream   sendMessageStream until a terminal state
//   get      getTask of the blocking send's task, and of the file's, whose history gives the
//            file back byte for byte
//   cancel   cancelTask of a task still running (an "interop:hold" task, sent non-blocking)
//   list/push listTasks answers and lists no anonymous task; push config create, get, list, delete on the held task
//   e2e      the blocking send's answer is the agent's (contains --expect)
//
// Prints one JSON object: {"cells": {...}, "notes": [...]}; a cell is "ok" or "FAIL: reason".
//
//   node client.mjs --url http://127.0.0.1:PORT --binding JSONRPC|HTTP+JSON|GRPC [--expect TEXT]

import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
};
const URL_ = arg('--url');
const BINDING = arg('--binding');
const EXPECT = arg('--expect', 'baton says:');
const TIMEOUT_MS = 40_000;

const notes = [];
const cells = {};

// What the SDK puts on the wire (JSON bindings): the headers of each kind of request.
const seen = new Set();
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const url = new URL(String(input?.url ?? input));
  const method = init?.method ?? 'GET';
  const key = `${method} ${url.pathname.replace(/[0-9a-f-]{20,}/g, '{id}')}`;
  if (!seen.has(key)) {
    seen.add(key);
    const headers = Object.fromEntries(new Headers(init?.headers ?? {}).entries());
    let rpc = '';
    try {
      rpc = JSON.parse(init?.body ?? '').method ?? '';
    } catch {}
    notes.push(`wire: ${key}${rpc ? ` (${rpc})` : ''} headers=${JSON.stringify(headers)}`);
  }
  return realFetch(input, init);
};

const short = (e) => {
  const text = String(e?.message ?? e).replace(/\s+/g, ' ').trim();
  const name = e?.constructor?.name && e.constructor.name !== 'Error' ? `${e.constructor.name}: ` : '';
  return (name + text).slice(0, 300);
};
const options = () => ({ signal: AbortSignal.timeout(TIMEOUT_MS) });
const stateName = (s) => TaskState[s] ?? String(s);
const textPart = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const message = (value) => ({
  message: {
    messageId: crypto.randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [textPart(value)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
  tenant: '',
});
const textsOf = (task) =>
  [task?.status?.message, ...(task?.artifacts ?? [])]
    .flatMap((m) => m?.parts ?? [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .join(' | ');
const isTask = (r) => r && 'status' in r && 'id' in r;
const CSV = new TextEncoder().encode('order,total\n1234,99.50\n');
const withFile = (value) => {
  const m = message(value);
  m.message.parts.push({ content: { $case: 'raw', value: CSV }, metadata: undefined, filename: 'orders.csv', mediaType: 'text/csv' });
  return m;
};

async function cell(name, fn) {
  try {
    const result = await fn();
    cells[name] = result ?? 'ok';
  } catch (e) {
    cells[name] = `FAIL: ${short(e)}`;
  }
}

function factory(polling) {
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new GrpcTransportFactory()],
      preferredTransports: [BINDING],
      clientConfig: { polling },
    }),
  );
}

let client, pollingClient, card;
let blockingTask, heldTask, fileTask;

await cell('card', async () => {
  client = await factory(false).createFromUrl(URL_);
  pollingClient = await factory(true).createFromUrl(URL_);
  card = await client.getAgentCard(options());
  const iface = card.supportedInterfaces.find((i) => i.protocolBinding === BINDING);
  notes.push(`card interfaces: ${card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.url} v${i.protocolVersion}`).join('; ')}`);
  if (client.transport.protocolName.toUpperCase() !== BINDING.toUpperCase()) {
    throw new Error(`factory chose ${client.transport.protocolName}, not ${BINDING}`);
  }
  notes.push(`transport ${client.transport.protocolName} at ${iface?.url}`);
});
if (!client) {
  for (const c of ['send', 'stream', 'get', 'cancel', 'list/push', 'e2e']) cells[c] = 'FAIL: blocked: no client (card failed)';
  print();
  process.exit(0);
}

await cell('send', async () => {
  const failures = [];
  try {
    const r = await client.sendMessage(message('hello from a2a-js'), options());
    if (!isTask(r)) failures.push(`blocking: answered with a Message, not a Task`);
    else {
      blockingTask = r;
      if (r.status.state !== TaskState.TASK_STATE_COMPLETED) failures.push(`blocking: ended ${stateName(r.status.state)}`);
    }
  } catch (e) {
    failures.push(`blocking: ${short(e)}`);
  }
  try {
    const r = await client.sendMessage(withFile('sum the file from a2a-js'), options());
    if (!isTask(r)) failures.push('with a file: answered with a Message, not a Task');
    else {
      fileTask = r;
      if (r.status.state !== TaskState.TASK_STATE_COMPLETED) failures.push(`with a file: ended ${stateName(r.status.state)}`);
    }
  } catch (e) {
    failures.push(`with a file: ${short(e)}`);
  }
  try {
    const r = await pollingClient.sendMessage(message('interop:hold a task to cancel'), options());
    if (!isTask(r)) failures.push('non-blocking: answered with a Message, not a Task');
    else {
      heldTask = r;
      notes.push(`non-blocking send answered ${stateName(r.status.state)}`);
    }
  } catch (e) {
    failures.push(`non-blocking: ${short(e)}`);
  }
  if (failures.length) throw new Error(failures.join('; '));
});

await cell('stream', async () => {
  const states = [];
  let last;
  for await (const event of client.sendMessageStream(message('stream to a2a-js'), options())) {
    const p = event.payload;
    if (p?.$case === 'task') last = p.value.status.state;
    else if (p?.$case === 'statusUpdate') last = p.value.status.state;
    else if (p?.$case === 'message') last = 'message';
    states.push(p?.$case === 'artifactUpdate' ? 'artifact' : stateName(last));
  }
  notes.push(`stream events: ${states.join(' > ')}`);
  if (last !== TaskState.TASK_STATE_COMPLETED) throw new Error(`stream ended at ${states.at(-1) ?? 'nothing'}`);
});

await cell('get', async () => {
  if (!blockingTask) throw new Error('blocked: no task (send failed)');
  const t = await client.getTask({ tenant: '', id: blockingTask.id, historyLength: undefined }, options());
  if (t.id !== blockingTask.id) throw new Error(`got task ${t.id}`);
  if (t.status.state !== blockingTask.status.state) throw new Error(`state ${stateName(t.status.state)}, send said ${stateName(blockingTask.status.state)}`);
  if (!fileTask) throw new Error('blocked: no file task (send with a file failed)');
  const f = await client.getTask({ tenant: '', id: fileTask.id, historyLength: undefined }, options());
  const part = (f.history ?? []).flatMap((m) => m.parts).find((p) => p.content?.$case === 'raw');
  if (!part) throw new Error('the file is not in the history');
  const same = part.content.value.length === CSV.length && part.content.value.every((b, i) => b === CSV[i]);
  if (!same || part.filename !== 'orders.csv' || part.mediaType !== 'text/csv') {
    throw new Error(`the file came back otherwise: ${part.filename} ${part.mediaType} ${part.content.value.length} bytes`);
  }
});

await cell('list/push', async () => {
  const failures = [];
  try {
    // This client names nobody, so Baton serves it as its anonymous caller, whose tasks are
    // reached by their ids alone and listed to nobody (docs/security.md): the listing answers
    // and must not show the task.
    const want = blockingTask?.id;
    const listed = await client.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 50, pageToken: '', statusTimestampAfter: undefined }, options());
    notes.push(`listTasks: ${listed.tasks.length} task(s)`);
    if (want && listed.tasks.some((t) => t.id === want)) failures.push('list: an anonymous task was listed');
  } catch (e) {
    failures.push(`list: ${short(e)}`);
  }
  if (!heldTask) failures.push('push: blocked: no task (non-blocking send failed)');
  else {
    const taskId = heldTask.id;
    try {
      const created = await client.createTaskPushNotificationConfig(
        { tenant: '', id: '', taskId, url: 'https://interop.example.com/hook', token: 'interop-token', authentication: undefined },
        options(),
      );
      if (!created.id) throw new Error('create: no config id');
      const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId, id: created.id }, options());
      if (got.url !== 'https://interop.example.com/hook') throw new Error(`get: url ${got.url}`);
      const list = await client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' }, options());
      if (!list.configs.some((c) => c.id === created.id)) throw new Error('list: config not listed');
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: created.id }, options());
    } catch (e) {
      failures.push(`push: ${short(e)}`);
    }
  }
  if (failures.length) throw new Error(failures.join('; '));
});

await cell('cancel', async () => {
  if (!heldTask) throw new Error('blocked: no task (non-blocking send failed)');
  const t = await client.cancelTask({ tenant: '', id: heldTask.id, metadata: undefined }, options());
  if (t.status.state !== TaskState.TASK_STATE_CANCELED) throw new Error(`cancel answered ${stateName(t.status.state)}`);
});

await cell('e2e', async () => {
  if (!blockingTask) throw new Error('blocked: no task (send failed)');
  const said = textsOf(blockingTask);
  if (!said.includes(EXPECT)) throw new Error(`answer ${JSON.stringify(said.slice(0, 120))} lacks ${JSON.stringify(EXPECT)}`);
});

print();

function print() {
  console.log(JSON.stringify({ cells, notes }));
}
