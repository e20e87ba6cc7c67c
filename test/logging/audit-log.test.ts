import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createLogger } from '@taskgate/cli';
import { tools } from '@taskgate/examples';
import { createGateway } from '@taskgate/gateway';
import { connectClient, postHeaders, raw, useRedis } from '@taskgate/test-harness';
import { createWorker } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';

const ALICE_TOKEN = 'alice-token-5d1c9e0b';
const BOB_TOKEN = 'bob-token-77a0c2f4';
const ARGUMENT = 'ARG-MARKER-3b9f';

type Entry = Record<string, unknown> & { audit?: string; msg: string };

describe('logs', () => {
  const redis = useRedis();

  it('[SEC-4] audit-logs creation, completion, failure, cancellation, retrieval, listing, failed look-ups and auth failures with the principal; never tokens or arguments', async () => {
    const lines: string[] = [];
    const destination = { write: (line: string) => void lines.push(line) };
    const gateway = createGateway({
      redis: redis.connect(),
      keyPrefix: redis.prefix,
      cursorSecret: 'audit-test-cursor-secret-0123456789',
      auth: { mode: 'tokens', tokens: { [ALICE_TOKEN]: 'alice', [BOB_TOKEN]: 'bob' } },
      logger: createLogger('info', 'taskgate-gateway', destination),
    });
    const worker = createWorker({
      redis: redis.url,
      prefix: redis.prefix,
      tools,
      logger: createLogger('info', 'taskgate-worker', destination),
    });
    try {
      const { url } = await gateway.listen(0);
      await worker.ready;
      const denied = await raw(url, { headers: postHeaders(undefined, { Authorization: 'Bearer wrong-token-1e2d' }) });
      expect(denied.status).toBe(401);
      const { client: alice, transport } = await connectClient(url, { token: ALICE_TOKEN });
      const bob = (await connectClient(url, { token: BOB_TOKEN })).client;

      const task = async (name: string, args: Record<string, unknown>): Promise<string> =>
        (
          await alice.request(
            { method: 'tools/call', params: { name, arguments: args, task: {} } },
            CreateTaskResultSchema,
          )
        ).task.taskId;
      const done = await task('sleep', { ms: 0 });
      await alice.experimental.tasks.getTaskResult(done, CallToolResultSchema);
      const failed = await task('fail', { message: 'it broke' });
      await alice.experimental.tasks.getTaskResult(failed, CallToolResultSchema);
      const cancelled = await task('sleep', { ms: 30_000 });
      await alice.experimental.tasks.cancelTask(cancelled);
      await alice.experimental.tasks.listTasks();
      await expect(bob.experimental.tasks.getTask(done)).rejects.toThrow('Task not found');
      expect(await alice.callTool({ name: 'echo', arguments: { text: ARGUMENT } })).toMatchObject({
        content: [{ text: ARGUMENT }],
      });
      await new Promise((resolve) => setTimeout(resolve, 100));

      const entries = lines.map((line) => JSON.parse(line) as Entry);
      const audit = (event: string) => entries.filter((entry) => entry.audit === event);
      expect(audit('auth.failed')).toEqual([expect.objectContaining({ reason: 'invalid_token', status: 401 })]);
      expect(audit('session.created').map((entry) => entry.principal)).toEqual(['alice', 'bob']);
      expect(audit('task.created').map((entry) => [entry.taskId, entry.principal, entry.tool])).toEqual([
        [done, 'alice', 'sleep'],
        [failed, 'alice', 'fail'],
        [cancelled, 'alice', 'sleep'],
      ]);
      // Completion and failure come from the worker, with the job's principal and ids.
      expect(audit('task.completed')).toEqual([
        expect.objectContaining({ name: 'taskgate-worker', taskId: done, principal: 'alice', queue: 'tool.sleep' }),
        // The plain echo call runs through a hidden record of kind `direct`.
        expect.objectContaining({ name: 'taskgate-worker', kind: 'direct', principal: 'alice', tool: 'echo' }),
      ]);
      expect(audit('task.failed')).toEqual([
        expect.objectContaining({ name: 'taskgate-worker', taskId: failed, principal: 'alice' }),
      ]);
      expect(audit('task.cancelled')).toEqual([expect.objectContaining({ taskId: cancelled, principal: 'alice' })]);
      expect(audit('task.result_retrieved').map((entry) => [entry.taskId, entry.principal])).toEqual([
        [done, 'alice'],
        [failed, 'alice'],
      ]);
      expect(audit('tasks.listed')).toEqual([expect.objectContaining({ principal: 'alice', count: 3 })]);
      expect(audit('task.lookup_failed')).toEqual([
        expect.objectContaining({ principal: 'bob', taskId: done, method: 'tasks/get' }),
      ]);
      // Every gateway entry of a request carries its request id (the process's tag and a counter), each its own.
      const audited = entries.filter((e) => e.name === 'taskgate-gateway' && e.audit !== undefined);
      for (const entry of audited) expect(entry.req).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
      expect(new Set(audited.map((e) => e.req)).size).toBeGreaterThan(5);
      const text = lines.join('');
      for (const secret of [ALICE_TOKEN, BOB_TOKEN, 'wrong-token-1e2d', ARGUMENT, transport.sessionId as string]) {
        expect(text).not.toContain(secret);
      }
    } finally {
      await worker.close({ deadlineMs: 500 });
      await gateway.close();
    }
  });

  it('redacts authorization headers, tokens and tool arguments wherever a log call or a child logger puts them', () => {
    const lines: string[] = [];
    const logger = createLogger('debug', 'redaction', { write: (line: string) => void lines.push(line) });
    logger.info(
      {
        headers: { authorization: 'Bearer leak-1' },
        token: 'leak-2',
        arguments: { text: 'leak-3' },
        job: { arguments: { text: 'leak-4' }, token: 'leak-5' },
        params: { arguments: { text: 'leak-6' } },
      },
      'careless',
    );
    // A child's bindings too, and its children's; what no path names is kept, and the caller's object unchanged.
    const given = { args: { text: 'leak-8' }, headers: { cookie: 'leak-9', accept: 'text/plain' } };
    logger
      .child({ token: 'leak-7', job: 'j' })
      .child(given)
      .warn({ keep: { nested: { token: 'kept' } } }, 'child');
    expect(given.args.text).toBe('leak-8');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toMatch(/leak-/);
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      headers: { authorization: '[redacted]' },
      token: '[redacted]',
      arguments: '[redacted]',
      job: { arguments: '[redacted]', token: '[redacted]' },
      params: { arguments: '[redacted]' },
    });
    expect(JSON.parse(lines[1] as string)).toMatchObject({
      token: '[redacted]',
      job: 'j',
      args: '[redacted]',
      headers: { cookie: '[redacted]', accept: 'text/plain' },
      keep: { nested: { token: 'kept' } },
    });
  });
});
