import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { bindTaskReceiver, type TaskReceiverCallback } from '@modelcontextprotocol/ext-tasks/receiver';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useDeliveryPods, waitFor } from './fixtures/delivery-pods.js';

// The server as requestor (CLT-1): a tool's elicitation and sampling go to a 2025-11-25 client that declared
// `tasks.requests.*` as client tasks, run by the official receiver (@modelcontextprotocol/ext-tasks) on the
// official v2 client; taskgate polls the client's tasks/get and reads its tasks/result, through two gateways
// behind a proxy without stickiness.

const pods = useDeliveryPods('clt');
const Loose = z.looseObject({});
type Loose = Record<string, unknown>;
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

interface Receiving {
  readonly elicitation?: TaskReceiverCallback;
  readonly sampling?: TaskReceiverCallback;
}

/** A v2 client on 2025-11-25; with `receiving`, the official receiver takes elicitation and sampling as tasks. */
async function connect(receiving?: Receiving): Promise<Client> {
  const client = new Client(
    { name: 'clt', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {} }, versionNegotiation: { mode: 'legacy' } },
  );
  // Plain requests: answered at once (the receiver hands requests without `task` to this handler).
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { go: true } }));
  if (receiving !== undefined) {
    const binding = bindTaskReceiver(client, {
      methods: { 'elicitation/create': true, 'sampling/createMessage': true },
      pollIntervalMs: 50,
      ttlMs: 60_000,
      elicitation: receiving.elicitation ?? (async () => ({ action: 'accept', content: { go: true } })),
      sampling:
        receiving.sampling ??
        (async () => ({ model: 'm', role: 'assistant', content: { type: 'text', text: 'unused' } })),
    });
    // The receiver types its capability object without an index signature; on the wire it is plain JSON.
    client.registerCapabilities({ tasks: { ...binding.capabilities } });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(`${pods.proxy.origin}/mcp`)));
  clients.push(client);
  return client;
}

/** Starts `name` as a taskgate task; returns its id. */
async function start(client: Client, name: string, args: Loose): Promise<string> {
  const created = (await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
    Loose,
  )) as { task: { taskId: string } };
  return created.task.taskId;
}

/** Polls the taskgate task until it is terminal, noting every statusMessage; then its tasks/result. */
async function finish(client: Client, taskId: string, messages: string[] = []) {
  let task: Loose = {};
  await waitFor(
    async () => {
      task = (await client.request({ method: 'tasks/get', params: { taskId } }, Loose)) as Loose;
      if (typeof task.statusMessage === 'string' && messages.at(-1) !== task.statusMessage)
        messages.push(task.statusMessage);
      return ['completed', 'failed', 'cancelled'].includes(String(task.status));
    },
    'the end of the task',
    20_000,
  );
  if (task.status !== 'completed') return { task, text: undefined };
  const result = (await client.request({ method: 'tasks/result', params: { taskId } }, Loose)) as {
    content: { text: string }[];
  };
  return { task, text: result.content[0]?.text };
}

/** The client tasks kept with the task's input requests in Redis. */
async function keptClientTasks(): Promise<Loose[]> {
  const keys = await pods.redis.keys(`${pods.keys.prefix}:*:req:*`);
  const kept = await Promise.all(keys.map((key) => pods.redis.hget(key, 'clientTask')));
  return kept.flatMap((raw) => (raw === null ? [] : [JSON.parse(raw) as Loose]));
}

describe('[CLT-1] elicitation and sampling as client tasks (official receiver, two gateways)', () => {
  it('runs an elicitation as a client task: polled, its result is the answer, its status in the statusMessage', async () => {
    const seen: Loose[] = [];
    const client = await connect({
      elicitation: async (request) => {
        seen.push(request.params as Loose);
        await new Promise((resolve) => setTimeout(resolve, 600));
        return { action: 'accept', content: { go: true } };
      },
    });
    const before = (await keptClientTasks()).length;
    const taskId = await start(client, 'confirm', {});
    const messages: string[] = [];
    const { text } = await finish(client, taskId, messages);
    expect(text).toBe('accept:true');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ message: 'Go?' });
    expect(messages).toContain("Waiting for the client's task (input_required)");
    const kept = await keptClientTasks();
    expect(kept.length).toBe(before + 1);
    expect(kept.at(-1)).toMatchObject({ status: 'completed', taskId: expect.any(String) });
  });

  it('runs a sampling request as a client task', async () => {
    const client = await connect({
      sampling: async () => ({ model: 'tide-model', role: 'assistant', content: { type: 'text', text: 'moon-made' } }),
    });
    const taskId = await start(client, 'muse', { topic: 'tides' });
    expect((await finish(client, taskId)).text).toBe('tide-model: moon-made');
  });

  it("rejects the tool's elicit with the client's message when the client task fails", async () => {
    const client = await connect({
      elicitation: async () => {
        throw new Error('the user walked away');
      },
    });
    const taskId = await start(client, 'confirm', {});
    expect((await finish(client, taskId)).text).toBe(
      "rejected: ClientTaskError: The client's task failed: the user walked away",
    );
  });

  it('cancels the client task when the taskgate task is cancelled', async () => {
    let clientSignal: AbortSignal | undefined;
    const client = await connect({
      elicitation: (_request, { signal }) => {
        clientSignal = signal;
        return new Promise(() => {});
      },
    });
    const taskId = await start(client, 'confirm', {});
    await waitFor(() => clientSignal !== undefined, 'the client task', 15_000);
    await client.request({ method: 'tasks/cancel', params: { taskId } }, Loose);
    await waitFor(() => clientSignal?.aborted === true, 'the client task cancelled', 15_000);
    expect((await client.request({ method: 'tasks/get', params: { taskId } }, Loose)).status).toBe('cancelled');
  });

  it('sends plain requests to a client without the capability; asTask: true there is refused', async () => {
    const client = await connect();
    expect((await finish(client, await start(client, 'confirm', {}))).text).toBe('accept:true');
    expect((await finish(client, await start(client, 'confirm', { asTask: true }))).text).toMatch(
      /^rejected: ClientCapabilityError: The client did not declare task-augmented elicitation\/create/,
    );
  });

  it('sends a plain request to a receiving client when the tool says asTask: false', async () => {
    let asTask = 0;
    const client = await connect({
      elicitation: async () => {
        asTask++;
        return { action: 'decline' };
      },
    });
    expect((await finish(client, await start(client, 'confirm', { asTask: false }))).text).toBe('accept:true');
    expect((await finish(client, await start(client, 'confirm', {}))).text).toBe('decline:undefined');
    expect(asTask).toBe(1);
  });

  // Last in this file: it kills gateway 0.
  it('finishes through the other pod when the gateway carrying the polls is killed -9', async () => {
    pods.proxy.route = ({ method }) => (method === 'GET' ? 0 : 1);
    let asked = 0;
    const client = await connect({
      elicitation: async () => {
        asked++;
        await new Promise((resolve) => setTimeout(resolve, 2500));
        return { action: 'accept', content: { go: true } };
      },
    });
    const taskId = await start(client, 'confirm', {});
    await waitFor(() => asked === 1, 'the client task', 15_000);
    // A poll or two went out on gateway 0's GET stream; then gateway 0 dies.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const killed = pods.gateways[0];
    process.kill(killed.pid, 'SIGKILL');
    expect(await killed.exited).toBe('SIGKILL');
    pods.proxy.route = () => 1;
    // The client's GET stream died with its pod; it waits on tasks/result now, which the other pod carries:
    // the poll left unanswered on the dead stream is followed by new ones there.
    const result = (await client.request({ method: 'tasks/result', params: { taskId } }, Loose)) as {
      content: { text: string }[];
    };
    expect(result.content[0]?.text).toBe('accept:true');
    expect(asked).toBe(1);
    expect(await keptClientTasks()).toContainEqual(expect.objectContaining({ status: 'completed' }));
  });
});
