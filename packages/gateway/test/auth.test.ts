import { CallToolResultSchema, CreateTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, postHeaders, raw, rawCall, rawInitialize, useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../src/index.js';
import { useStacks } from './support/stack.js';

const TOKENS = { 'alice-token-0123456789': 'alice', 'bob-token-0123456789': 'bob' };
const ALICE = { Authorization: 'Bearer alice-token-0123456789' };
const BOB = { Authorization: 'Bearer bob-token-0123456789' };

/** A logger that keeps every entry, to check what the audit log says (and that no secret is in it). */
function recordingLogger(): { logger: Logger; entries: { level: string; fields: object; message: string }[] } {
  const entries: { level: string; fields: object; message: string }[] = [];
  const make = (bindings: object): Logger => {
    const at =
      (level: string) =>
      (fields: object, message: string): void => {
        entries.push({ level, fields: { ...bindings, ...fields }, message });
      };
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (more) => make({ ...bindings, ...more }),
    };
  };
  return { logger: make({}), entries };
}

async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('authentication and owner binding', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('answers a missing or wrong bearer token with 401 and a WWW-Authenticate challenge', async () => {
    const { logger, entries } = recordingLogger();
    const { url } = await start({ tools: false, gateway: { auth: { mode: 'tokens', tokens: TOKENS }, logger } });
    const missing = await raw(url, { headers: postHeaders(), body: '{}' });
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="taskgate"');
    const wrong = await raw(url, { headers: postHeaders(undefined, { Authorization: 'Bearer nope' }), body: '{}' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe(
      'Bearer realm="taskgate", error="invalid_token", error_description="The bearer token is not valid"',
    );
    const get = await raw(url, { method: 'GET', headers: { Accept: 'text/event-stream' } });
    expect(get.status).toBe(401);
    expect(await rawInitialize(url, ALICE)).toMatch(/^[\x21-\x7e]{32,}$/);

    const failures = entries.filter((e) => (e.fields as { audit?: string }).audit === 'auth.failed');
    expect(failures.map((e) => (e.fields as { reason: string }).reason)).toEqual([
      'missing_token',
      'invalid_token',
      'missing_token',
    ]);
    expect(JSON.stringify(entries)).not.toContain('alice-token');
    expect(JSON.stringify(entries)).not.toContain('nope');
  });

  it("answers another principal's session with 404", async () => {
    const { url } = await start({ tools: false, gateway: { auth: { mode: 'tokens', tokens: TOKENS } } });
    const sessionId = await rawInitialize(url, ALICE);
    expect((await rawCall(url, sessionId, 'ping', undefined, ALICE)).status).toBe(200);
    const stolen = await rawCall(url, sessionId, 'ping', undefined, BOB);
    expect(stolen.status).toBe(404);
    expect((stolen.json() as { error: { code: number } }).error.code).toBe(-32001);
    const stolenGet = await raw(url, {
      method: 'GET',
      headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, ...BOB },
    });
    expect(stolenGet.status).toBe(404);
    const stolenDelete = await raw(url, { method: 'DELETE', headers: postHeaders(sessionId, BOB) });
    expect(stolenDelete.status).toBe(404);
    expect((await rawCall(url, sessionId, 'ping', undefined, ALICE)).status).toBe(200);
  });

  it('[SEC-1] binds tasks to the principal: another principal cannot get, await, cancel or list them', async () => {
    const { logger, entries } = recordingLogger();
    const { url } = await start({ gateway: { auth: { mode: 'tokens', tokens: TOKENS }, logger } });
    const alice = (await connectClient(url, { token: 'alice-token-0123456789' })).client;
    const aliceAgain = (await connectClient(url, { token: 'alice-token-0123456789' })).client;
    const bob = (await connectClient(url, { token: 'bob-token-0123456789' })).client;
    const created = await alice.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 5000 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;

    const notFound = { code: -32602, message: 'MCP error -32602: Failed to retrieve task: Task not found' };
    expect(await rejection(bob.experimental.tasks.getTask(taskId))).toEqual(notFound);
    expect(await rejection(bob.experimental.tasks.cancelTask(taskId))).toEqual(notFound);
    expect(await rejection(bob.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))).toEqual(notFound);
    expect((await bob.experimental.tasks.listTasks()).tasks).toEqual([]);

    // The same principal sees its tasks from any of its sessions.
    expect((await aliceAgain.experimental.tasks.getTask(taskId)).status).toBe('working');
    expect((await aliceAgain.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toEqual([taskId]);
    expect((await alice.experimental.tasks.cancelTask(taskId)).status).toBe('cancelled');

    const audit = entries.map((e) => (e.fields as { audit?: string }).audit).filter((a) => a !== undefined);
    expect(audit).toEqual(
      expect.arrayContaining(['session.created', 'task.created', 'task.lookup_failed', 'task.cancelled']),
    );
    expect(audit.filter((a) => a === 'task.lookup_failed')).toHaveLength(3);
    const created1 = entries.find((e) => (e.fields as { audit?: string }).audit === 'task.created');
    expect(created1?.fields).toMatchObject({ taskId, tool: 'sleep', principal: 'alice' });
    // Tool arguments and tokens never reach the log.
    expect(JSON.stringify(entries)).not.toContain('5000');
    expect(JSON.stringify(entries)).not.toContain('token-0123456789');
  });

  it('[SEC-1] without auth, tasks belong to the session that created them', async () => {
    const { url } = await start();
    const one = (await connectClient(url)).client;
    const two = (await connectClient(url)).client;
    const created = await one.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 0 }, task: {} } },
      CreateTaskResultSchema,
    );
    expect((await one.experimental.tasks.getTask(created.task.taskId)).taskId).toBe(created.task.taskId);
    expect((await rejection(two.experimental.tasks.getTask(created.task.taskId))).code).toBe(-32602);
    expect((await two.experimental.tasks.listTasks()).tasks).toEqual([]);
  });
});
