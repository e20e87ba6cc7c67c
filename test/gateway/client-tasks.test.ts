import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { useDeliveryPods, waitFor } from './fixtures/delivery-pods.js';
import { connectReceiving, finishTask, Loose, type Receiving, startTask } from './fixtures/receiving-client.js';

// The server as requestor (CLT-1): a tool's elicitation and sampling go to a 2025-11-25 client that declared
// `tasks.requests.*` as client tasks, run by the official receiver (@modelcontextprotocol/ext-tasks) on the
// official v2 client; taskgate polls the client's tasks/get and reads its tasks/result, through two gateways
// behind a proxy without stickiness.

const pods = useDeliveryPods('clt');
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

async function connect(receiving?: Receiving): Promise<Client> {
  const client = await connectReceiving(`${pods.proxy.origin}/mcp`, receiving);
  clients.push(client);
  return client;
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
    const taskId = await startTask(client, 'confirm', {});
    const messages: string[] = [];
    const { text } = await finishTask(client, taskId, messages);
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
    const taskId = await startTask(client, 'muse', { topic: 'tides' });
    expect((await finishTask(client, taskId)).text).toBe('tide-model: moon-made');
  });

  it("rejects the tool's elicit with the client's message when the client task fails", async () => {
    const client = await connect({
      elicitation: async () => {
        throw new Error('the user walked away');
      },
    });
    const taskId = await startTask(client, 'confirm', {});
    expect((await finishTask(client, taskId)).text).toBe(
      "rejected: ClientTaskError: The client's task failed: the user walked away",
    );
  });

  it("fails the taskgate task with the client's message when the tool lets the failed client task's error through", async () => {
    const client = await connect({
      elicitation: async () => {
        throw new Error('the approver declined to decide');
      },
    });
    const taskId = await startTask(client, 'confirm', { rethrow: true });
    const { task } = await finishTask(client, taskId);
    expect(task).toMatchObject({
      status: 'failed',
      statusMessage: expect.stringContaining("The client's task failed: the approver declined to decide"),
    });
    const result = (await client.request({ method: 'tasks/result', params: { taskId } }, Loose)) as Loose;
    expect(JSON.stringify(result)).toContain('the approver declined to decide');
  });

  it('cancels the client task when the taskgate task is cancelled', async () => {
    let clientSignal: AbortSignal | undefined;
    const client = await connect({
      elicitation: (_request, { signal }) => {
        clientSignal = signal;
        return new Promise(() => {});
      },
    });
    const taskId = await startTask(client, 'confirm', {});
    await waitFor(() => clientSignal !== undefined, 'the client task', 15_000);
    await client.request({ method: 'tasks/cancel', params: { taskId } }, Loose);
    await waitFor(() => clientSignal?.aborted === true, 'the client task cancelled', 15_000);
    expect((await client.request({ method: 'tasks/get', params: { taskId } }, Loose)).status).toBe('cancelled');
  });

  it('sends plain requests to a client without the capability; asTask: true there is refused', async () => {
    const client = await connect();
    expect((await finishTask(client, await startTask(client, 'confirm', {}))).text).toBe('accept:true');
    expect((await finishTask(client, await startTask(client, 'confirm', { asTask: true }))).text).toMatch(
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
    expect((await finishTask(client, await startTask(client, 'confirm', { asTask: false }))).text).toBe('accept:true');
    expect((await finishTask(client, await startTask(client, 'confirm', {}))).text).toBe('decline:undefined');
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
    const taskId = await startTask(client, 'confirm', {});
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
