import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ForkedProcess } from '@taskgate/test-harness';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor as waitUntil } from '../gateway/fixtures/delivery-pods.js';
import { type Pods, startPods } from '../gateway/fixtures/processes.js';
import { connectReceiving, finishTask, Loose, startTask } from '../gateway/fixtures/receiving-client.js';
import { forkBridge, removeConfigs, waitFor, writeConfig } from './support.js';
import { everythingStdio, sdkClient } from './upstream-support.js';

// CLT-1 toward upstreams: the bridge's client declares task-augmented elicitation and sampling, so the reference
// server's (@modelcontextprotocol/server-everything, over stdio) async tools send them with `task`; the bridge
// answers with a client task of its own, asks taskgate's client (an official SDK client, through two gateways
// without stickiness) and serves the upstream's tasks/get and tasks/result polls until the answer is in.

const ELICIT = 'everything_trigger-elicitation-request-async';
const SAMPLE = 'everything_trigger-sampling-request-async';
const ASKING_SERVER = fileURLToPath(new URL('./fixtures/asking-server.mjs', import.meta.url));

let pods: Pods;
let bridge: ForkedProcess;
const clients: Client[] = [];

beforeAll(async () => {
  const tools = { include: ['trigger-elicitation-request-async', 'trigger-sampling-request-async'] };
  const asking = { name: 'asking', stdio: { command: process.execPath, args: [ASKING_SERVER] } };
  const config = writeConfig({ servers: [everythingStdio({ tools }), asking] });
  pods = await startPods(
    'upstream-clt',
    { TASKGATE_CURSOR_SECRET: 'upstream-clt-cursor-secret-0123456789', TASKGATE_POLL_INTERVAL_MS: '100' },
    async (env) => {
      bridge = await forkBridge(env, config);
      return bridge;
    },
  );
  // The reference server offers its async tools only to a client that declared the matching task capability.
  const client = await sdkClient(`${pods.proxy.origin}/mcp`, {});
  await waitFor(async () => {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    return names.includes(ELICIT) && names.includes(SAMPLE) && names.includes('asking_ask-then-cancel');
  }, 'the async tools of the upstream');
  await client.close();
}, 90_000);

afterAll(async () => {
  await pods?.stop();
  removeConfigs();
}, 60_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

async function connect(capabilities: Record<string, unknown>): Promise<Client> {
  const client = await sdkClient(`${pods.proxy.origin}/mcp`, capabilities);
  clients.push(client);
  return client;
}

/** Runs `name` as a taskgate task to its end; the texts of its result. */
async function run(client: Client, name: string, args: Record<string, unknown>): Promise<string[]> {
  let result: { content: { type: string; text?: string }[]; isError?: boolean } | undefined;
  for await (const message of client.experimental.tasks.callToolStream(
    { name, arguments: args },
    CallToolResultSchema,
    { task: {}, timeout: 60_000 },
  )) {
    if (message.type === 'error') throw message.error;
    if (message.type === 'result') result = message.result as typeof result;
  }
  expect(result?.isError).not.toBe(true);
  return (result?.content ?? []).map((part) => part.text ?? '');
}

describe('[CLT-1] bridge servers: an upstream elicitation and sampling as client tasks of the bridge', () => {
  it('answers a task-augmented elicitation: a client task polled by the upstream, the answer its result', async () => {
    const client = await connect({ elicitation: { form: {} } });
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Record<string, unknown>);
      // Answered after the upstream's first poll, which then finds the question still open.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      return { action: 'accept', content: { name: 'Ada', favoriteColor: 'Blue', agreeToTerms: true } };
    });
    const texts = await run(client, ELICIT, {});
    expect(texts[0]).toBe('[COMPLETED] User provided the requested information!');
    expect(texts[1]).toBe('User inputs:\n- Name: Ada\n- Favorite Color: Blue\n- Agreed to terms: true');
    // The upstream saw the bridge's task (an unguessable id), polled it while it waited and read its result.
    const progress = texts[2] ?? '';
    expect(progress).toMatch(/^\nProgress:\nTask created: [0-9a-f]{32}\nPoll 1: input_required\n/);
    expect(progress).toMatch(/\nPoll \d+: completed\n/);
    expect(progress).toContain('"action": "accept"');
    // taskgate's client got the question once, as a plain request of taskgate's task (no upstream `task`).
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ message: 'Please provide inputs for the following fields (async task demo):' });
    expect(asked[0]?.task).toBeUndefined();
  }, 60_000);

  it('answers a task-augmented sampling request with the client model', async () => {
    const client = await connect({ sampling: {} });
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled for the upstream' } };
    });
    const texts = await run(client, SAMPLE, { prompt: 'tides', maxTokens: 20 });
    expect(texts[0]).toMatch(/^\[COMPLETED\] Async sampling completed!/);
    // Polled while taskgate's client answered (working), then completed.
    expect(texts[0]).toMatch(/Task created: [0-9a-f]{32}\n(Poll \d+: working\n)*Poll \d+: completed\n/);
    expect(texts[0]).toContain('"text": "sampled for the upstream"');
    expect(texts[0]).toContain('"model": "test-model"');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ maxTokens: 20, systemPrompt: 'You are a helpful test server.' });
    expect(asked[0]?.task).toBeUndefined();
  }, 60_000);

  it("fails the client task with the client's error; the upstream reads it as the task's failure", async () => {
    const client = await connect({ elicitation: { form: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => {
      throw new Error('the user walked away');
    });
    const texts = await run(client, ELICIT, {});
    expect(texts[0]).toMatch(/^\[FAILED\] the user walked away\n\nProgress:\nTask created: [0-9a-f]{32}\n/);
    expect(texts[0]).toMatch(/\nPoll \d+: failed - the user walked away$/);
  }, 60_000);

  it("withdraws the question when the upstream cancels the bridge's task: taskgate cancels its client's task", async () => {
    // taskgate's client takes the relayed question as a client task of its own (the official receiver).
    let clientSignal: AbortSignal | undefined;
    const client = await connectReceiving(`${pods.proxy.origin}/mcp`, {
      elicitation: (_request, { signal }) => {
        clientSignal = signal;
        return new Promise(() => {});
      },
    });
    try {
      const taskId = await startTask(client, 'asking_ask-then-cancel', {});
      await waitUntil(() => clientSignal?.aborted === true, "the client's task cancelled", 30_000);
      // Withdrawn by the cancel while the upstream tool still runs (it returns 4 s after cancelling).
      const running = (await client.request({ method: 'tasks/get', params: { taskId } }, Loose)) as Loose;
      expect(running.status).toBe('working');
      const { task, text } = await finishTask(client, taskId, [], 30_000);
      expect(task.status).toBe('completed');
      expect(JSON.parse(text ?? '{}')).toEqual({
        created: 'input_required',
        listed: true,
        before: 'input_required',
        cancelled: 'cancelled',
        result: expect.stringContaining('was cancelled; it has no result'),
      });
    } finally {
      await client.close();
    }
  }, 60_000);
});
