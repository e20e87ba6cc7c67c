import { Keys } from '@taskgate/core';
import { TASKS_EXTENSION } from '@taskgate/protocol';
import type { ForkedProcess } from '@taskgate/test-harness';
import {
  type RawResponse,
  type RedisServer,
  raw,
  rawCall,
  rawInitialize,
  startRedis,
  uniquePrefix,
  waitFor,
} from '@taskgate/test-harness';
import { TEST_TOOLS } from '@taskgate/test-harness/tools';
import { createWorker, type TaskgateWorker } from '@taskgate/worker';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkGateway } from '../gateway/fixtures/processes.js';

// TASKGATE_REDIS_WAIT_REPLICAS=1 against a real primary and its replica. With the replica stopped (SIGSTOP: it
// reads and acknowledges nothing, so every WAIT runs out), a create is refused with 503 in time, and nothing of
// it remains: its id is unknown, its job gone, and no worker ever ran it. A worker keeps the job of a task whose
// finish the replica has not confirmed: a failover that lost the finish finds the job still to do.

const SECRET = 'wait-replicas-cursor-secret-0123456789';
const TIMEOUT_MS = 500;
/** Tasks created at once with the replica cut off; with a direct call and a 2026-07-28 task, the creates. */
const TASKS = 12;
const CREATES = TASKS + 2;
/** The worker's job lock: a job left active is handed out again this long (plus a stalled check) later. */
const LOCK_MS = 5000;
const NOT_REPLICATED = {
  code: -32603,
  message:
    'Service Unavailable: the Redis replicas did not confirm the request in time; nothing was created, retry it shortly',
};

let primary: RedisServer;
let replica: RedisServer;
let admin: Redis;
let gateway: { proc: ForkedProcess; url: string };
let worker: TaskgateWorker;
const prefix = uniquePrefix('wait');
const keys = new Keys(prefix);

async function replicaInSync(): Promise<boolean> {
  const info = await admin.info('replication');
  return /connected_slaves:1/.test(info) && /slave0:[^\n]*state=online/.test(info);
}

function create2026(name: string, args: Record<string, unknown>): Promise<RawResponse> {
  const body = {
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
      },
    },
  };
  return raw(gateway.url, {
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': name,
    },
    body: JSON.stringify(body),
  });
}

/** The ids of the tasks the gateway logged as not acknowledged. */
function unacknowledgedIds(): string[] {
  return [...gateway.proc.output().matchAll(/"taskId":"([^"]+)"[^\n]*"msg":"task not acknowledged/g)].map(
    (match) => match[1] as string,
  );
}

beforeAll(async () => {
  primary = await startRedis();
  replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
  admin = new Redis(primary.port, '127.0.0.1');
  await waitFor(replicaInSync, 'the replica in sync', 20_000);
  // The worker waits for the replica too: it lets a job go only once the replica holds the task's finish.
  worker = createWorker({
    redis: { url: primary.url, waitReplicas: { replicas: 1, timeoutMs: TIMEOUT_MS } },
    prefix,
    tools: TEST_TOOLS,
    lockDurationMs: LOCK_MS,
    stalledIntervalMs: 1000,
  });
  await worker.ready;
  gateway = await forkGateway({
    REDIS_URL: primary.url,
    TASKGATE_KEY_PREFIX: prefix,
    TASKGATE_CURSOR_SECRET: SECRET,
    TASKGATE_REDIS_WAIT_REPLICAS: '1',
    TASKGATE_REDIS_WAIT_TIMEOUT_MS: String(TIMEOUT_MS),
  });
}, 90_000);

afterAll(async () => {
  if (replica !== undefined) process.kill(replica.pid, 'SIGCONT');
  await gateway?.proc.stop('SIGKILL');
  await worker?.close({ deadlineMs: 500 });
  admin?.disconnect();
  await replica?.stop();
  await primary?.stop();
});

describe('TASKGATE_REDIS_WAIT_REPLICAS=1 with the replica cut off', () => {
  it('acknowledges a task the replica confirmed, and the worker runs it at once', async () => {
    const sessionId = await rawInitialize(gateway.url);
    const created = await rawCall(gateway.url, sessionId, 'tools/call', {
      name: 'sleep',
      arguments: { ms: 10 },
      task: {},
    });
    expect(created.status).toBe(200);
    const taskId = (created.json() as { result: { task: { taskId: string } } }).result.task.taskId;
    // The job was held until the replica confirmed, then promoted: it runs now, not after its hold.
    await waitFor(
      async () => (await admin.hget(keys.task(taskId), 'status')) === 'completed',
      'the task to complete',
      8_000,
    );
  });

  it("keeps a job active until the replica holds its task's finish, then lets it go", async () => {
    const sessionId = await rawInitialize(gateway.url);
    const created = await rawCall(gateway.url, sessionId, 'tools/call', {
      name: 'sleep',
      arguments: { ms: 1500 },
      task: {},
    });
    expect(created.status).toBe(200);
    const taskId = (created.json() as { result: { task: { taskId: string } } }).result.task.taskId;
    process.kill(replica.pid, 'SIGSTOP');
    try {
      const [, found] = await admin.scan(0, 'MATCH', `${prefix}:*:${taskId}`, 'COUNT', 100_000);
      const jobKey = found.find((key) => key !== keys.task(taskId)) as string;
      expect(await admin.hget(jobKey, 'data')).toContain(taskId);
      await waitFor(
        async () => (await admin.hget(keys.task(taskId), 'status')) === 'completed',
        'the finish on the primary',
        10_000,
      );
      // Its WAIT (500 ms) runs out; the job stays active, well within its lock (5 s).
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 500));
      const activeKey = jobKey.replace(/[^:]+$/, 'active');
      expect(await admin.exists(jobKey)).toBe(1);
      expect(await admin.lrange(activeKey, 0, -1)).toContain(taskId);
      process.kill(replica.pid, 'SIGCONT');
      // Handed out again after its lock, the job finds the task finished and is let go (completed and removed,
      // not failed); the result stands.
      const letGo = async () => !(await admin.lrange(activeKey, 0, -1)).includes(taskId);
      await waitFor(letGo, 'the job let go', LOCK_MS * 4);
      expect(await admin.zscore(jobKey.replace(/[^:]+$/, 'failed'), taskId)).toBeNull();
      const result = await rawCall(gateway.url, sessionId, 'tasks/result', { taskId });
      expect((result.json() as { result: { content: unknown } }).result.content).toEqual([
        { type: 'text', text: 'slept 1500 ms' },
      ]);
    } finally {
      process.kill(replica.pid, 'SIGCONT');
    }
    await waitFor(replicaInSync, 'the replica back in sync', 20_000);
  }, 60_000);

  it('refuses creates the replica does not confirm with 503 in time, and leaves nothing of them', async () => {
    const sessionId = await rawInitialize(gateway.url);
    const before = await admin.zcard(keys.ownerActive(Keys.ownerId(sessionId)));
    process.kill(replica.pid, 'SIGSTOP');
    const started = Date.now();
    const timed = async (request: Promise<RawResponse>) => {
      const response = await request;
      return { response, ms: Date.now() - started };
    };
    // Twelve tasks, a direct call (2025-11-25) and a task of revision 2026-07-28, all at once.
    const answers = await Promise.all([
      ...Array.from({ length: TASKS }, () =>
        timed(rawCall(gateway.url, sessionId, 'tools/call', { name: 'sleep', arguments: { ms: 10 }, task: {} })),
      ),
      timed(rawCall(gateway.url, sessionId, 'tools/call', { name: 'sleep', arguments: { ms: 10 } })),
      timed(create2026('sleep', { ms: 10 })),
    ]);
    for (const [i, { response, ms }] of answers.entries()) {
      expect(response.status, response.text).toBe(503);
      expect(response.headers['retry-after']).toBe('1');
      expect(response.json()).toEqual({ jsonrpc: '2.0', id: i === CREATES - 1 ? 7 : 1, error: NOT_REPLICATED });
      // Two WAIT rounds (1 s) and the load's delays, far from two WAITs per create queued behind each other (14 s).
      expect(ms).toBeLessThan(CREATES * TIMEOUT_MS);
    }
    // The gateway's log lines reach this process through a pipe, maybe after its answers.
    await waitFor(() => unacknowledgedIds().length >= CREATES, 'the log line of every refused create');
    const ids = unacknowledgedIds();
    expect(ids).toHaveLength(CREATES);
    for (const taskId of ids) {
      const got = await rawCall(gateway.url, sessionId, 'tasks/get', { taskId });
      expect(got.json()).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32602, message: 'Failed to retrieve task: Task not found' },
      });
      expect(await admin.exists(keys.task(taskId))).toBe(0);
      // No BullMQ job (hash, or entry of a state's set) remains under the task's id.
      const [, left] = await admin.scan(0, 'MATCH', `${prefix}:*${taskId}*`, 'COUNT', 100_000);
      expect(left).toEqual([]);
    }
    const listed = await rawCall(gateway.url, sessionId, 'tasks/list', {});
    expect((listed.json() as { result: { tasks: unknown[] } }).result.tasks).toEqual([]);
    expect(await admin.zcard(keys.ownerActive(Keys.ownerId(sessionId)))).toBe(before);

    process.kill(replica.pid, 'SIGCONT');
    await waitFor(replicaInSync, 'the replica back in sync', 20_000);
    const again = await rawCall(gateway.url, sessionId, 'tools/call', {
      name: 'sleep',
      arguments: { ms: 10 },
      task: {},
    });
    expect(again.status).toBe(200);
  }, 60_000);

  it('answers a cancel only once the replica holds it: 503 while it is cut off, then the retry is refused', async () => {
    const sessionId = await rawInitialize(gateway.url);
    const created = await rawCall(gateway.url, sessionId, 'tools/call', {
      name: 'sleep',
      arguments: { ms: 20_000 },
      task: {},
    });
    expect(created.status).toBe(200);
    const taskId = (created.json() as { result: { task: { taskId: string } } }).result.task.taskId;
    process.kill(replica.pid, 'SIGSTOP');
    const cancel = await rawCall(gateway.url, sessionId, 'tasks/cancel', { taskId });
    expect(cancel.status, cancel.text).toBe(503);
    expect(cancel.headers['retry-after']).toBe('1');
    expect(cancel.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32603,
        message:
          'Service Unavailable: the Redis replicas did not confirm the cancel in time; it may or may not stand, retry it shortly',
      },
    });
    // The primary took it: once the replica is back, the retry finds the task cancelled (CNL-1).
    process.kill(replica.pid, 'SIGCONT');
    await waitFor(replicaInSync, 'the replica back in sync', 20_000);
    const retry = await rawCall(gateway.url, sessionId, 'tasks/cancel', { taskId });
    expect(retry.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: "Cannot cancel task: already in terminal status 'cancelled'" },
    });
    const other = await rawCall(gateway.url, sessionId, 'tools/call', {
      name: 'sleep',
      arguments: { ms: 20_000 },
      task: {},
    });
    const otherId = (other.json() as { result: { task: { taskId: string } } }).result.task.taskId;
    const confirmed = await rawCall(gateway.url, sessionId, 'tasks/cancel', { taskId: otherId });
    expect(confirmed.status).toBe(200);
    expect((confirmed.json() as { result: { status: string } }).result.status).toBe('cancelled');
  }, 60_000);
});
