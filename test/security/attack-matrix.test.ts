import { randomBytes } from 'node:crypto';
import { Keys, ListCursorCodec } from '@taskgate/core';
import { postHeaders, raw, rawCall, rawInitialize, scrape, waitFor } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AttackStack,
  dumpRedis,
  findLeaks,
  INITIALIZE,
  jwtChallenge,
  LIMITS,
  logLines,
  openResponse,
  PROBES,
  sessionNotFound,
  slowHeaders,
  startAttackStack,
  unsignedToken,
} from './attack-stack.js';

/**
 * The attack matrix: one case per attack, each asserting the exact refusal, against real processes (the CLI's
 * gateways and worker) and a real Redis; the last case reads every key and value of Redis and every log line
 * of every process for the secrets, tokens, session ids and tool arguments the run used.
 */
describe('attack matrix', () => {
  let stack: AttackStack;
  const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
  const tokens: Record<string, string> = {};
  const sessions: Record<string, string> = {};
  /** Session ids are bearer secrets: none may be stored or logged verbatim. */
  const sessionIds: string[] = [];
  /** Unique strings put into tool arguments only. */
  const markers: string[] = [];
  const marker = (label: string): string => {
    const value = `argmark${label}${randomBytes(6).toString('hex')}`;
    markers.push(value);
    return value;
  };
  const open = async (principal: string, url?: string): Promise<string> => {
    tokens[principal] ??= await stack.sign({ sub: principal });
    const sessionId = await rawInitialize(url ?? stack.jwtUrl, auth(tokens[principal]));
    sessionIds.push(sessionId);
    return sessionId;
  };
  const call = (principal: string, method: string, params?: unknown, sessionId = sessions[principal]) =>
    rawCall(stack.jwtUrl, sessionId as string, method, params, auth(tokens[principal] as string));
  /** A raw POST of `principal` on its session (`null`: without a session). */
  const post = (principal: string, body: string, sessionId: string | null | undefined = sessions[principal]) =>
    raw(stack.jwtUrl, { headers: postHeaders(sessionId ?? undefined, auth(tokens[principal] as string)), body });
  const taskIdOf = (created: { json(): unknown }) =>
    (created.json() as { result: { task: { taskId: string } } }).result.task.taskId;
  const taskIds: string[] = [];
  let cursor = '';

  beforeAll(async () => {
    stack = await startAttackStack();
    sessions.alice = await open('alice');
    sessions.bob = await open('bob');
    for (const label of ['sec1a', 'sec1b']) {
      const params = { name: 'stash', arguments: { note: marker(label) }, task: { ttl: 600_000 } };
      taskIds.push(taskIdOf(await call('alice', 'tools/call', params)));
    }
    await waitFor(
      async () => {
        const got = await call('alice', 'tasks/get', { taskId: taskIds[1] });
        return (got.json() as { result?: { status?: string } }).result?.status === 'completed';
      },
      'the stash tasks to complete',
      30_000,
    );
    const page = await call('alice', 'tasks/list');
    cursor = (page.json() as { result: { nextCursor: string } }).result.nextCursor;
  }, 240_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const taskNotFound = { code: -32602, message: 'Failed to retrieve task: Task not found' };

  it.each(['tasks/get', 'tasks/result', 'tasks/cancel'])(
    "[SEC-1] another principal's %s of a task answers -32602 Task not found",
    async (method) => {
      const response = await call('bob', method, { taskId: taskIds[0] });
      expect(response.status).toBe(200);
      expect(response.json()).toEqual({ jsonrpc: '2.0', id: 1, error: taskNotFound });
    },
  );

  it("[SEC-1] another principal's tasks/list shows none of the tasks", async () => {
    const response = await call('bob', 'tasks/list');
    expect(response.json()).toEqual({ jsonrpc: '2.0', id: 1, result: { tasks: [] } });
  });

  it.each(['POST', 'GET', 'DELETE'])(
    'a session id used by another principal (%s) answers 404 -32001',
    async (method) => {
      const headers = {
        ...postHeaders(sessions.alice, auth(tokens.bob as string)),
        Accept: 'application/json, text/event-stream',
      };
      const body = method === 'POST' ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) : undefined;
      const response = await raw(stack.jwtUrl, { method, headers, ...(body !== undefined && { body }) });
      expect(response.status).toBe(404);
      expect(response.json()).toEqual(sessionNotFound(method === 'POST' ? 1 : null));
      // The session still works for its principal.
      expect((await call('alice', 'ping')).json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    },
  );

  const ZERO = { score: 0, id: 'x' };
  const invalidCursor = (reason: string) => ({
    code: -32602,
    message: `Invalid cursor: ${reason}. Call tasks/list without a cursor to start over.`,
  });
  it.each([
    ['forged', 'bob', () => 'AAAA', 'it is not a cursor this server issued'],
    ['forged with a dot', 'alice', () => 'e30.AAAAAAAAAAAAAAAAAAAAAA', 'it is not a cursor this server issued to you'],
    [
      'tampered',
      'alice',
      () => `${cursor.slice(0, 2)}${cursor[2] === 'A' ? 'B' : 'A'}${cursor.slice(3)}`,
      'it is not a cursor this server issued to you',
    ],
    [
      'expired',
      'alice',
      // Signed with the deployment's secret for alice, two hours ago (cursors last one).
      () =>
        new ListCursorCodec(stack.cursorSecret, 1, () => Date.now() - 7_200_000).encode(Keys.ownerId('alice'), ZERO),
      'it has expired',
    ],
    ["another owner's", 'bob', () => cursor, 'it is not a cursor this server issued to you'],
  ])('[LST-3] a %s cursor answers -32602 Invalid cursor', async (_label, principal, make, reason) => {
    expect(cursor).not.toBe('');
    const response = await call(principal, 'tasks/list', { cursor: make() });
    expect(response.json()).toEqual({ jsonrpc: '2.0', id: 1, error: invalidCursor(reason) });
  });

  it.each([
    ['Host', { Host: 'evil.example' }, "Forbidden: Host 'evil.example' is not allowed"],
    ['Host:port', { Host: 'rebound.example:80' }, "Forbidden: Host 'rebound.example:80' is not allowed"],
    ['Origin', { Origin: 'http://evil.example' }, "Forbidden: Origin 'http://evil.example' is not allowed"],
  ])('DNS rebinding: a foreign %s answers 403', async (_label, extra, message) => {
    const response = await rawCall(stack.jwtUrl, sessions.alice as string, 'ping', undefined, {
      ...auth(tokens.alice as string),
      ...extra,
    });
    expect(response.status).toBe(403);
    expect(response.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message } });
  });

  it('an oversized body answers 413', async () => {
    const note = 'x'.repeat(1024 * 1024);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'stash', arguments: { note } },
    });
    const response = await post('alice', body);
    expect(response.status).toBe(413);
    expect(response.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Payload Too Large: the body exceeds 1048576 bytes' },
    });
  });

  it.each([
    ['arrays', (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`, '[0]'],
    ['objects', (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`, '.a'],
  ])('deeply nested JSON (%s, 100,000 levels) answers 400 -32600 naming where', async (_label, nest, step) => {
    // The message is level 1, params 2, arguments 3, value 4: the 65th level is 61 steps into the value.
    const path = `params.arguments.value${step.repeat(61)}`;
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nest","arguments":{"value":${nest(100_000)}}}}`;
    const response = await post('alice', body);
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32600,
        message: `Invalid Request: the body nests deeper than 64 levels (at ${path.slice(0, 80)}…)`,
      },
    });
    expect((await call('alice', 'ping')).json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('slow headers (slowloris): the gateway answers 408 and closes the socket', async () => {
    const { elapsed, received } = await slowHeaders(stack.jwtUrl, 200);
    expect(elapsed).toBeGreaterThanOrEqual(LIMITS.headersTimeoutMs - 100);
    // Node checks connections every quarter of the timeout here; a loaded machine adds its delay.
    expect(elapsed).toBeLessThan(LIMITS.headersTimeoutMs + 4000);
    const error = { code: -32600, message: 'Request Timeout: the request did not arrive in time' };
    const [head, body] = received.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n.*Connection: close$/s);
    expect(JSON.parse(body as string)).toEqual({ jsonrpc: '2.0', id: null, error });
  });

  it('too many sessions of one principal: initialize answers -32011 until one ends', async () => {
    const metrics = new URL('/metrics', stack.jwtUrl).href;
    const ids = [];
    for (let i = 0; i < LIMITS.sessions; i++) ids.push(await open('dave'));
    const refused = await post('dave', INITIALIZE, null);
    expect(refused.status).toBe(200);
    expect(refused.headers['mcp-session-id']).toBeUndefined();
    expect(refused.json()).toEqual({
      jsonrpc: '2.0',
      id: 0,
      error: {
        code: -32011,
        message:
          `Too many sessions: at most ${LIMITS.sessions} sessions of one principal may be open at once. ` +
          'End one (DELETE with its Mcp-Session-Id) or wait for an idle one to expire, then try again.',
        data: { limit: LIMITS.sessions },
      },
    });
    expect((await scrape(metrics)).value('taskgate_session_limit_rejections_total')).toBe(1);
    const ended = await raw(stack.jwtUrl, {
      method: 'DELETE',
      headers: postHeaders(ids[0], auth(tokens.dave as string)),
    });
    expect(ended.status).toBe(200);
    expect(await open('dave')).toMatch(/^[A-Za-z0-9_-]{4}\.[A-Za-z0-9_-]{43}$/);
  });

  it('too many open streams of one principal: a GET stream answers 429, a streamed answer -32012', async () => {
    const metrics = new URL('/metrics', stack.jwtUrl).href;
    const ids = [await open('erin'), await open('erin'), await open('erin')];
    const get = (sessionId: string) =>
      openResponse(stack.jwtUrl, {
        headers: { ...postHeaders(sessionId, auth(tokens.erin as string)), Accept: 'text/event-stream' },
      });
    const streams = [await get(ids[0] as string), await get(ids[1] as string)];
    expect(streams.map((stream) => stream.status)).toEqual([200, 200]);
    const message =
      `Too many open streams: at most ${LIMITS.streams} SSE streams of one principal may be open on this server at ` +
      'once. Close one (or wait for a task to finish), then try again.';
    const third = await raw(stack.jwtUrl, {
      method: 'GET',
      headers: { ...postHeaders(ids[2], auth(tokens.erin as string)), Accept: 'text/event-stream' },
    });
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBe('1');
    expect(third.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32012, message } });

    const long = { name: 'stash', arguments: { note: marker('stream'), ms: 60_000 }, task: {} };
    const taskId = taskIdOf(await call('erin', 'tools/call', long, ids[2]));
    const result = await call('erin', 'tasks/result', { taskId }, ids[2]);
    expect(result.status).toBe(200);
    expect(result.headers['retry-after']).toBe('1');
    expect(result.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32012, message, data: { limit: LIMITS.streams, retryAfterMs: 1000 } },
    });
    expect((await scrape(metrics)).value('taskgate_stream_limit_rejections_total')).toBe(2);
    // A closed stream gives its place back: the answer streams now.
    streams[0]?.close();
    await waitFor(
      async () => {
        const waiting = await openResponse(stack.jwtUrl, {
          method: 'POST',
          headers: postHeaders(ids[2], auth(tokens.erin as string)),
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/result', params: { taskId } }),
        });
        waiting.close();
        return waiting.headers['content-type'] === 'text/event-stream';
      },
      'a place among the open streams',
      30_000,
    );
    const cancelled = await call('erin', 'tasks/cancel', { taskId }, ids[2]);
    expect((cancelled.json() as { result: { status: string } }).result.status).toBe('cancelled');
    streams[1]?.close();
  });

  it.each(PROBES.map((probe) => [JSON.stringify(probe.slice(0, 16)), probe]))(
    'task id %s answers -32602 Task not found (get, result, cancel) and writes no key',
    async (_label, probe) => {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
        const response = await call('alice', method, { taskId: probe });
        expect(response.json()).toEqual({ jsonrpc: '2.0', id: 1, error: taskNotFound });
      }
    },
  );

  it.each(PROBES.map((probe) => [JSON.stringify(probe.slice(0, 16)), probe]))(
    'tool name %s answers -32602 Unknown tool',
    async (_label, probe) => {
      const response = await call('alice', 'tools/call', { name: probe, arguments: { note: marker('probe') } });
      expect(response.json()).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32602, message: `Unknown tool: '${probe}'. Call tools/list to see the available tools.` },
      });
    },
  );

  it.each(['*', 'zqprobe:{t}:*', 'zqprobe\\nx'])('Mcp-Session-Id %s answers 404 -32001', async (probe) => {
    const response = await call('alice', 'ping', undefined, probe);
    expect(response.status).toBe(404);
    expect(response.json()).toEqual(sessionNotFound(1));
  });

  it('newline and ANSI escapes in arguments: the call succeeds, and logs stay one JSON object per line', async () => {
    const note = `${marker('inject')}\n{"level":50,"msg":"forged entry","audit":"task.completed"}\r\n\u001b[31mred\u001b[0m`;
    const response = await call('alice', 'tools/call', { name: 'stash', arguments: { note } });
    expect(response.events()).toEqual([
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'stashed' }] } },
    ]);
  });

  it('a tool that throws: the task fails, and its job kept among the failed ones holds no arguments', async () => {
    const response = await call('alice', 'tools/call', { name: 'refuse', arguments: { note: marker('failed') } });
    expect(response.events()).toEqual([
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'refused on purpose' }], isError: true } },
    ]);
  });

  const now = () => Math.floor(Date.now() / 1000);
  it.each([
    ['alg none', async () => unsignedToken({ sub: 'alice' }), 'The access token is not valid'],
    [
      'a key the JWKS does not hold',
      () => stack.sign({ sub: 'alice' }, { key: 'foreign' }),
      'The access token is not valid',
    ],
    ['an expired token', () => stack.sign({ sub: 'alice' }, { expiresAt: now() - 60 }), 'The access token expired'],
    [
      'another audience',
      () => stack.sign({ sub: 'alice' }, { audience: 'https://other.example.test/mcp' }),
      'The access token is not valid',
    ],
  ])('a JWT with %s answers 401 invalid_token', async (_label, make, description) => {
    const token = await make();
    stack.secrets.push(token);
    const response = await rawCall(stack.jwtUrl, sessions.alice as string, 'ping', undefined, auth(token));
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe(jwtChallenge('invalid_token', description));
    const message = `Unauthorized: ${description.toLowerCase()}`;
    expect(response.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message } });
  });

  it.each([
    ['JWT', 'jwt'],
    ['static token', 'tokens'],
  ])('a %s in the query string answers 400 invalid_request, with or without the header', async (_label, gateway) => {
    const url = gateway === 'jwt' ? stack.jwtUrl : stack.tokensUrl;
    const token = gateway === 'jwt' ? (tokens.alice as string) : stack.staticToken;
    const sessionId = gateway === 'jwt' ? sessions.alice : await rawInitialize(url, auth(token));
    if (gateway === 'tokens') sessionIds.push(sessionId as string);
    const description = 'Access tokens are accepted in the Authorization header only';
    const expected =
      gateway === 'jwt'
        ? jwtChallenge('invalid_request', description)
        : `Bearer realm="taskgate", error="invalid_request", error_description="${description}"`;
    const leaky = `${url}?access_token=${encodeURIComponent(token)}`;
    for (const extra of [{}, auth(token)]) {
      const response = await rawCall(leaky, sessionId as string, 'ping', undefined, extra);
      expect(response.status).toBe(400);
      expect(response.headers['www-authenticate']).toBe(expected);
      const message = 'Bad Request: send the access token in the Authorization header, never in the URL';
      expect(response.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message } });
    }
  });

  it('a wrong static token answers 401 invalid_token', async () => {
    const wrong = `static-${randomBytes(16).toString('hex')}`;
    const response = await rawCall(stack.tokensUrl, 'none', 'ping', undefined, auth(wrong));
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer realm="taskgate", error="invalid_token", error_description="The bearer token is not valid"',
    );
  });

  it('after every row: no key or value in Redis and no log line holds a secret, token, session id or argument', async () => {
    const dump = await dumpRedis(stack.redis);
    // Not vacuous: the run's tasks and sessions are there.
    expect(dump.some((entry) => entry.key.includes(':task:'))).toBe(true);
    expect(dump.some((entry) => entry.key.includes(':session:'))).toBe(true);
    const lines = logLines(stack.processes);
    expect(lines.some((line) => line.includes('"audit":"task.created"'))).toBe(true);
    for (const line of lines) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      expect(typeof entry.level, line).toBe('number');
      expect(entry.msg, line).not.toBe('forged entry');
    }
    expect(markers.length).toBeGreaterThan(10);
    expect(findLeaks(dump, lines, [...stack.secrets, ...sessionIds, ...markers])).toEqual([]);
    expect(dump.filter((entry) => entry.key.includes('zqprobe') || entry.key.includes('zq probe'))).toEqual([]);
  });
});
