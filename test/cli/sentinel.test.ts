import { type RawResponse, rawCall, rawInitialize, startRedisSentinels, uniquePrefix } from '@taskgate/test-harness';
import { TEST_TOOLS } from '@taskgate/test-harness/tools';
import { createWorker } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { forkGateway } from '../gateway/fixtures/processes.js';

const SECRET = 'sentinel-cursor-secret-0123456789';

/** The JSON-RPC messages of an answer, an SSE stream or one JSON body. */
const messages = (response: RawResponse): unknown[] =>
  response.events().length > 0 ? response.events() : [response.json()];

describe('Redis Sentinel (one master, one replica, three sentinels)', () => {
  it('a gateway process and a worker reach the master through the sentinels; after SENTINEL FAILOVER during a task, it and new tasks complete', async () => {
    await using set = await startRedisSentinels();
    const prefix = uniquePrefix('sentinel');
    const worker = createWorker({
      redis: {
        url: 'redis://',
        sentinels: set.sentinelPorts.map((port) => ({ host: '127.0.0.1', port })),
        sentinelName: set.name,
      },
      prefix,
      tools: TEST_TOOLS,
    });
    const { proc, url } = await forkGateway({
      REDIS_URL: 'redis://127.0.0.1:1',
      TASKGATE_REDIS_SENTINELS: set.sentinels,
      TASKGATE_REDIS_SENTINEL_NAME: set.name,
      TASKGATE_KEY_PREFIX: prefix,
      TASKGATE_CURSOR_SECRET: SECRET,
    });
    try {
      await worker.ready;
      const echo = async (text: string) => {
        const sessionId = await rawInitialize(url);
        return (await rawCall(url, sessionId, 'tools/call', { name: 'echo', arguments: { text } })).events();
      };
      expect(await echo('before')).toEqual([
        { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'before' }] } },
      ]);
      // A task in flight across the failover: created and taken by the worker on the old master.
      const flightSession = await rawInitialize(url);
      const inFlight = messages(
        await rawCall(url, flightSession, 'tools/call', { name: 'sleep', arguments: { ms: 1500 }, task: {} }),
      ) as { result: { task: { taskId: string } } }[];
      const inFlightId = inFlight[0]?.result.task.taskId as string;
      const newMaster = await set.failover();
      expect(newMaster).toBe(set.replica.port);
      // The connections follow the failover: the next call completes on the promoted replica.
      const deadline = Date.now() + 20_000;
      let after: unknown[] = [];
      for (;;) {
        after = await echo('after').catch(() => []);
        if (JSON.stringify(after).includes('"text":"after"') || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(after).toEqual([{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'after' }] } }]);
      // The task in flight completes: its worker and the gateways reconnected to the promoted replica.
      const flown = messages(await rawCall(url, flightSession, 'tasks/result', { taskId: inFlightId }));
      expect(flown).toMatchObject([{ jsonrpc: '2.0', result: { content: [{ type: 'text', text: 'slept 1500 ms' }] } }]);
      // A task created on the new master runs to completion.
      const sessionId = await rawInitialize(url);
      const created = messages(
        await rawCall(url, sessionId, 'tools/call', { name: 'sleep', arguments: { ms: 200 }, task: {} }),
      ) as { result: { task: { taskId: string; status: string } } }[];
      const taskId = created[0]?.result.task.taskId as string;
      expect(created, JSON.stringify(created)).toMatchObject([{ result: { task: { status: 'working' } } }]);
      const result = messages(await rawCall(url, sessionId, 'tasks/result', { taskId }));
      expect(result).toMatchObject([{ jsonrpc: '2.0', result: { content: [{ type: 'text', text: 'slept 200 ms' }] } }]);
    } finally {
      await proc.stop('SIGKILL');
      await worker.close({ deadlineMs: 500 });
    }
  }, 90_000);
});
