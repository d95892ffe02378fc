// The courier: an A2A 1.0 agent written with the released @a2a-js/sdk (its DefaultRequestHandler
// and express handlers, unchanged), over JSON-RPC. It quotes the shipping of an order, and it
// cannot quote without knowing the delivery speed, so it asks:
//
//   first message ("ship order 1042 to Lyon")  -> INPUT_REQUIRED "Standard … or express …?"
//   the answer on the same task ("express")    -> COMPLETED, the quote as an artifact and as
//                                                  the status message
//
// Baton knows nothing of this code: it reads the card at /.well-known/agent-card.json like any
// client would.
//
//   node courier.mjs --port 8311      prints "ready" once it listens

import express from 'express';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const portAt = process.argv.indexOf('--port');
const PORT = Number(portAt > 0 ? process.argv[portAt + 1] : 8311);
const SPEEDS = {
  standard: { price: '€6.50', when: 'in 3 working days' },
  express: { price: '€19.00', when: 'the next working day' },
};
const QUESTION = 'Standard shipping (3 working days, €6.50) or express (next working day, €19.00)?';

const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const said = (message) =>
  message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join(' ').trim();
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
const status = (taskId, contextId, state, value) =>
  AgentEvent.statusUpdate({
    taskId,
    contextId,
    status: { state, timestamp: new Date().toISOString(), message: agentMessage(taskId, contextId, value) },
    metadata: {},
  });

class Courier {
  // What each task asked for at first: the destination the quote names.
  requests = new Map();

  cancelTask = async (taskId, eventBus) => {
    this.requests.delete(taskId);
    eventBus.publish(status(taskId, '', TaskState.TASK_STATE_CANCELED, 'cancelled'));
  };

  async execute(ctx, eventBus) {
    const { taskId, contextId, userMessage } = ctx;
    const words = said(userMessage);
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
    if (!this.requests.has(taskId)) {
      const destination = words.match(/\bto ([A-Z][\p{L}-]+)/u)?.[1] ?? 'the address on the order';
      this.requests.set(taskId, destination);
      eventBus.publish(status(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, QUESTION));
      return;
    }
    const speed = Object.keys(SPEEDS).find((name) => words.toLowerCase().includes(name));
    if (!speed) {
      eventBus.publish(status(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, `Please choose one. ${QUESTION}`));
      return;
    }
    const destination = this.requests.get(taskId);
    this.requests.delete(taskId);
    const { price, when } = SPEEDS[speed];
    const quote = `${speed[0].toUpperCase()}${speed.slice(1)} shipping to ${destination}: ${price}, delivered ${when}.`;
    eventBus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING, 'quoting'));
    eventBus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: { artifactId: crypto.randomUUID(), name: 'quote', description: '', parts: [text(quote)], metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: {},
      }),
    );
    eventBus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED, quote));
  }
}

const base = `http://127.0.0.1:${PORT}`;
const card = {
  name: 'Courier',
  description: 'Quotes the shipping of an order to a destination: price and delivery date, standard or express.',
  supportedInterfaces: [{ url: base, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
  provider: undefined,
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'shipping-quote',
      name: 'Shipping quote',
      description: 'Quotes shipping an order to a city: price and delivery date, for the speed the customer picks.',
      tags: ['shipping', 'delivery', 'quote'],
      examples: ['How much to ship order 1042 to Lyon?'],
      inputModes: ['text/plain'],
      outputModes: ['text/plain'],
      securityRequirements: [],
    },
  ],
  documentationUrl: '',
  signatures: [],
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new Courier());
const app = express();
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const server = app.listen(PORT, '127.0.0.1');
await new Promise((resolve, reject) => {
  server.on('listening', resolve);
  server.on('error', reject);
});
console.log('ready', PORT);

const stop = () => {
  server.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
