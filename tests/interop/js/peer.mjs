// An A2A agent on the released @a2a-js/sdk (its DefaultRequestHandler, express handlers and
// gRPC service, unchanged), for Baton to delegate to. One process serves three agents, one per
// binding, each with a card that offers only that binding:
//
//   http://127.0.0.1:HTTP/jsonrpc   card + JSON-RPC
//   http://127.0.0.1:HTTP/rest      card + HTTP+JSON
//   http://127.0.0.1:HTTP/grpc      card only; its interface is gRPC at 127.0.0.1:GRPC
//
// Every task: WORKING, then COMPLETED with "a2a-js peer answers: <text>" (as an artifact and as
// the status message). A message whose text holds "interop:hold" stays WORKING until it is
// cancelled (at most 120 s). Push notifications are on (the SDK's in-memory store and sender).
//
// GET /_log returns every call the handlers took (binding, method, A2A-Version, extensions, a
// few headers) and every push POST the SDK's sender made (url, status): what Baton did to it.
//
//   node peer.mjs --http-port N --grpc-port M     prints "ready" once both listen

import express from 'express';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  STATE_HEADERS_KEY,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { A2AService, grpcService } from '@a2a-js/sdk/server/grpc';

const arg = (name) => {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`missing ${name}`);
  return process.argv[i + 1];
};
const HTTP_PORT = Number(arg('--http-port'));
const GRPC_PORT = Number(arg('--grpc-port'));
const HOLD_MS = 120_000;

const log = [];

// The SDK's push sender uses the global fetch: record what it posted and what it got back.
const realFetch = globalThis.fetch;
globalThis.fetch = async (url, init) => {
  const entry = { method: 'push-delivery', url: String(url), headers: Object.keys(init?.headers ?? {}) };
  try {
    const pushed = JSON.parse(init?.body ?? '{}');
    const kind = Object.keys(pushed)[0];
    entry.payload = `${kind} ${pushed[kind]?.status?.state ?? ''}`.trim();
  } catch {}
  try {
    const response = await realFetch(url, init);
    entry.status = response.status;
    if (!response.ok) entry.body = (await response.clone().text()).slice(0, 1000);
    return response;
  } catch (e) {
    entry.error = String(e);
    throw e;
  } finally {
    log.push(entry);
  }
};

const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const agentMessage = (taskId, contextId, value) => ({
  messageId: crypto.randomUUID(),
  contextId,
  taskId,
  role: Role.ROLE_AGENT,
  parts: [text(value)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const status = (taskId, contextId, state, message) =>
  AgentEvent.statusUpdate({
    taskId,
    contextId,
    status: { state, timestamp: new Date().toISOString(), message },
    metadata: {},
  });

class Executor {
  holds = new Map(); // taskId -> resolve(cancelled)

  cancelTask = async (taskId, eventBus) => {
    const release = this.holds.get(taskId);
    if (release) release(true);
    else eventBus.publish(status(taskId, '', TaskState.TASK_STATE_CANCELED, undefined));
  };

  async execute(ctx, eventBus) {
    const { taskId, contextId, userMessage } = ctx;
    const said = userMessage.parts
      .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
      .join(' ')
      .trim();
    eventBus.publish(
      AgentEvent.task(
        ctx.task ?? {
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
          artifacts: [],
          history: [userMessage],
          metadata: undefined,
        },
      ),
    );
    eventBus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING, agentMessage(taskId, contextId, 'working on it')));
    if (said.includes('interop:hold')) {
      const cancelled = await new Promise((resolve) => {
        this.holds.set(taskId, resolve);
        setTimeout(() => resolve(false), HOLD_MS).unref();
      });
      this.holds.delete(taskId);
      const state = cancelled ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_FAILED;
      eventBus.publish(status(taskId, contextId, state, agentMessage(taskId, contextId, cancelled ? 'cancelled' : 'held too long')));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const answer = `a2a-js peer answers: ${said.slice(0, 200)}`;
    eventBus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: { artifactId: crypto.randomUUID(), name: 'answer', description: '', parts: [text(answer)], metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: {},
      }),
    );
    eventBus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED, agentMessage(taskId, contextId, answer)));
  }
}

const card = (binding, url) => ({
  name: `a2a-js peer (${binding})`,
  description: `An @a2a-js/sdk agent serving ${binding}: it echoes what it is asked.`,
  supportedInterfaces: [{ url, protocolBinding: binding, tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
  provider: undefined,
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'echo',
      name: 'Echo',
      description: 'Answers with what it was asked.',
      tags: ['echo'],
      examples: ['say hello'],
      inputModes: ['text/plain'],
      outputModes: ['text/plain'],
      securityRequirements: [],
    },
  ],
  documentationUrl: '',
  signatures: [],
});

const WATCHED_HEADERS = ['content-type', 'accept', 'a2a-version', 'a2a-extensions', 'x-participant-id', 'authorization', 'user-agent'];
function logged(binding, handler) {
  return new Proxy(handler, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function' || prop === 'getAgentCard') return value;
      return function (params, context) {
        const raw = context?.state?.get?.(STATE_HEADERS_KEY) ?? {};
        const headers = {};
        for (const [k, v] of Object.entries(raw)) if (WATCHED_HEADERS.includes(k.toLowerCase())) headers[k.toLowerCase()] = String(v);
        log.push({
          binding,
          method: String(prop),
          taskId: params?.taskId || params?.id || params?.message?.taskId || '',
          text: (params?.message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : `<${p.content?.$case}>`)).join(' ').slice(0, 200),
          version: context?.requestedVersion,
          extensions: context?.requestedExtensions ? [...context.requestedExtensions] : [],
          headers,
        });
        return value.call(target, params, context);
      };
    },
  });
}

const executor = new Executor();
const taskStore = new InMemoryTaskStore();
const pushStore = new InMemoryPushNotificationStore();
const pushSender = new DefaultPushNotificationSender(pushStore);
const handlerFor = (binding, url) =>
  logged(binding, new DefaultRequestHandler(card(binding, url), taskStore, executor, undefined, pushStore, pushSender));

const base = `http://127.0.0.1:${HTTP_PORT}`;
const jsonrpc = handlerFor('JSONRPC', `${base}/jsonrpc`);
const rest = handlerFor('HTTP+JSON', `${base}/rest`);
const grpc = handlerFor('GRPC', `127.0.0.1:${GRPC_PORT}`);

const app = express();
app.get('/_log', (_req, res) => res.json(log));
for (const [path, handler] of [['/jsonrpc', jsonrpc], ['/rest', rest], ['/grpc', grpc]]) {
  app.use(`${path}/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
}
app.use('/jsonrpc', jsonRpcHandler({ requestHandler: jsonrpc, userBuilder: UserBuilder.noAuthentication }));
app.use('/rest', restHandler({ requestHandler: rest, userBuilder: UserBuilder.noAuthentication }));

const grpcServer = new Server();
grpcServer.addService(A2AService, grpcService({ requestHandler: grpc, userBuilder: UserBuilder.noAuthentication }));

await new Promise((resolve, reject) =>
  grpcServer.bindAsync(`127.0.0.1:${GRPC_PORT}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
);
const http = app.listen(HTTP_PORT, '127.0.0.1');
await new Promise((resolve, reject) => {
  http.on('listening', resolve);
  http.on('error', reject);
});
console.log('ready', HTTP_PORT, GRPC_PORT);

const stop = () => {
  grpcServer.forceShutdown();
  http.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
