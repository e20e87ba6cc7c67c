import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { type ForkedProcess, forkNode, freePort } from '@taskgate/test-harness';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './fixtures/delivery-pods.js';
import { type Pods, startPods, waitForOutput } from './fixtures/processes.js';
import { connectReceiving, finishTask, type Loose, startTask } from './fixtures/receiving-client.js';

// Client tasks (CLT-1) and the workers that run them: the CLI's `taskgate worker` with the delivery tools behind
// two gateways. A worker killed -9 while its tool waits on a client task is replaced and the question is asked
// again; TASKGATE_CLIENT_TASKS=off sends plain requests even to a client that takes them as tasks.

const root = fileURLToPath(new URL('../../', import.meta.url));
const TOOLS = `${root}test/gateway/fixtures/delivery-tools.ts`;

let pods: Pods;
let first: ForkedProcess;
const workers: ForkedProcess[] = [];
const clients: Client[] = [];

/** `taskgate worker` with the delivery tools; a crashed worker's task is taken over within about 3 s. */
async function startWorker(env: Readonly<Record<string, string>>, extra: Record<string, string> = {}) {
  const worker = forkNode(`${root}packages/cli/src/run.ts`, ['worker', '--tools', TOOLS], {
    ...env,
    TASKGATE_METRICS_PORT: String(await freePort()),
    TASKGATE_LOCK_DURATION_MS: '2000',
    TASKGATE_STALLED_INTERVAL_MS: '1000',
    TASKGATE_CLIENT_TASK_MIN_POLL_MS: '100',
    ...extra,
  });
  await waitForOutput(worker, /worker ready/, 60_000);
  return worker;
}

beforeAll(async () => {
  pods = await startPods(
    'clt-workers',
    { TASKGATE_CURSOR_SECRET: 'client-task-workers-cursor-secret-01', TASKGATE_POLL_INTERVAL_MS: '200' },
    async (env) => {
      first = await startWorker(env);
      return first;
    },
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.stop('SIGTERM', 5000)));
  await pods?.stop();
}, 60_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

async function connect(...args: Parameters<typeof connectReceiving> extends [string, ...infer R] ? R : never) {
  const client = await connectReceiving(`${pods.proxy.origin}/mcp`, ...args);
  clients.push(client);
  return client;
}

describe('[CLT-1] client tasks across workers', () => {
  it('asks again from the worker that takes over when the worker waiting on the client task is killed -9', async () => {
    const asked: Loose[] = [];
    const client = await connect({
      elicitation: async (request) => {
        asked.push(request.params as Loose);
        await new Promise((resolve) => setTimeout(resolve, 1500));
        return { action: 'accept', content: { go: asked.length === 2 } };
      },
    });
    const taskId = await startTask(client, 'confirm', {});
    await waitFor(() => asked.length === 1, 'the first client task', 15_000);
    process.kill(first.pid, 'SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    workers.push(await startWorker(pods.env));
    const messages: string[] = [];
    const { task, text } = await finishTask(client, taskId, messages, 45_000);
    expect(task.status).toBe('completed');
    // The second execution asked again (the first one's question died with its worker) and got its answer.
    expect(asked).toHaveLength(2);
    expect(asked[1]).toMatchObject({ message: 'Go?' });
    expect(text).toBe('accept:true');
  }, 90_000);

  it('sends a plain request to a receiving client with TASKGATE_CLIENT_TASKS=off; asTask: true still asks as a task', async () => {
    // Only the `off` worker takes jobs from here on.
    await Promise.all(workers.splice(0).map((worker) => worker.stop('SIGTERM', 5000)));
    workers.push(await startWorker(pods.env, { TASKGATE_CLIENT_TASKS: 'off' }));
    let asTask = 0;
    const client = await connect({
      elicitation: async () => {
        asTask++;
        return { action: 'decline' };
      },
    });
    // The receiver's plain handler accepts; its task handler declines.
    expect((await finishTask(client, await startTask(client, 'confirm', {}))).text).toBe('accept:true');
    expect(asTask).toBe(0);
    expect((await finishTask(client, await startTask(client, 'confirm', { asTask: true }))).text).toBe(
      'decline:undefined',
    );
    expect(asTask).toBe(1);
  }, 90_000);
});
