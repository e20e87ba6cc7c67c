import { connect } from 'node:net';
import { Keys } from '@taskgate/core';
import { connectClient, postHeaders, raw, rawCall, rawInitialize, sleepMs, useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { useStacks } from './support/stack.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** The JSON-RPC error of a raw response body. */
const rpcError = (body: unknown): { code: number; message: string } =>
  (body as { error: { code: number; message: string } }).error;

describe('Streamable HTTP transport', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('refuses a POST without both media types in Accept with 406', async () => {
    const { url } = await start({ tools: false });
    // Twice each: the second time the gateway knows the header already.
    for (const accept of ['application/json', 'text/event-stream', '*/*', 'application/json', '*/*']) {
      const response = await raw(url, { headers: { ...postHeaders(), Accept: accept }, body: JSON.stringify(INIT) });
      expect(response.status, accept).toBe(406);
      expect(rpcError(response.json())).toEqual({
        code: -32600,
        message: 'Not Acceptable: the Accept header must list application/json and text/event-stream',
      });
    }
    for (let i = 0; i < 2; i++) {
      const accept = 'Application/JSON;q=0.9, text/event-stream';
      const response = await raw(url, { headers: { ...postHeaders(), Accept: accept }, body: JSON.stringify(INIT) });
      expect(response.status, accept).toBe(200);
    }
  });

  it('refuses a body that is not declared as JSON with 415', async () => {
    const { url } = await start({ tools: false });
    const response = await raw(url, {
      headers: { ...postHeaders(), 'Content-Type': 'text/plain' },
      body: JSON.stringify(INIT),
    });
    expect(response.status).toBe(415);
    expect(rpcError(response.json()).code).toBe(-32600);
  });

  it('answers malformed JSON with 400 and -32700, and keeps serving', async () => {
    const { url } = await start({ tools: false });
    for (const body of ['{"jsonrpc": "2.0", "id": 1, "method": ', '', 'nul']) {
      const response = await raw(url, { headers: postHeaders(), body });
      expect(response.status, body).toBe(400);
      const error = rpcError(response.json());
      expect(error.code).toBe(-32700);
      expect(response.json()).toHaveProperty('id', null);
    }
    const sessionId = await rawInitialize(url);
    expect((await rawCall(url, sessionId, 'ping')).json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('refuses JSON-RPC batches and invalid messages with 400 and -32600', async () => {
    const { url } = await start({ tools: false });
    const batch = await raw(url, { headers: postHeaders(), body: JSON.stringify([INIT, INIT]) });
    expect(batch.status).toBe(400);
    expect(rpcError(batch.json())).toEqual({
      code: -32600,
      message: 'Invalid Request: JSON-RPC batches are not supported; send each message on its own',
    });
    for (const body of [{ jsonrpc: '1.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: null, method: 'ping' }, 42]) {
      const response = await raw(url, { headers: postHeaders(), body: JSON.stringify(body) });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(rpcError(response.json()).code).toBe(-32600);
    }
  });

  it('refuses a body over the configured limit with 413', async () => {
    const { url } = await start({ tools: false, gateway: { bodyLimitBytes: 1024 } });
    const sessionId = await rawInitialize(url);
    const big = await rawCall(url, sessionId, 'ping', { _meta: { pad: 'x'.repeat(2000) } });
    expect(big.status).toBe(413);
    expect(rpcError(big.json())).toEqual({ code: -32600, message: 'Payload Too Large: the body exceeds 1024 bytes' });
    expect((await rawCall(url, sessionId, 'ping')).status).toBe(200);
  });

  it('refuses foreign Host and Origin headers with 403 (DNS rebinding)', async () => {
    const { url } = await start({ tools: false });
    const port = new URL(url).port;
    const evilHost = await raw(url, {
      headers: { ...postHeaders(), Host: `evil.example:${port}` },
      body: JSON.stringify(INIT),
    });
    expect(evilHost.status).toBe(403);
    expect(rpcError(evilHost.json())).toEqual({
      code: -32600,
      message: `Forbidden: Host 'evil.example:${port}' is not allowed`,
    });
    const evilOrigin = await raw(url, {
      headers: { ...postHeaders(), Origin: 'https://evil.example' },
      body: JSON.stringify(INIT),
    });
    expect(evilOrigin.status).toBe(403);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      const ok = await raw(url, {
        headers: { ...postHeaders(), Host: host, Origin: `http://localhost:${port}` },
        body: JSON.stringify(INIT),
      });
      expect(ok.status, host).toBe(200);
    }
  });

  it('honours configured hosts and origins', async () => {
    const { url } = await start({
      tools: false,
      gateway: { allowedHosts: ['mcp.example'], allowedOrigins: ['https://app.example'] },
    });
    const ok = await raw(url, {
      headers: { ...postHeaders(), Host: 'mcp.example', Origin: 'https://app.example' },
      body: JSON.stringify(INIT),
    });
    expect(ok.status).toBe(200);
    const local = await raw(url, { headers: postHeaders(), body: JSON.stringify(INIT) });
    expect(local.status).toBe(403);
  });

  it('creates a session at initialize: a ≥128-bit visible-ASCII id, stored under a digest, version negotiated', async () => {
    const { url, redis: conn, keys } = await start({ tools: false });
    const response = await raw(url, { headers: postHeaders(), body: JSON.stringify(INIT) });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const sessionId = response.headers['mcp-session-id'] as string;
    expect(sessionId).toMatch(/^[\x21-\x7e]+$/);
    // The owner's slot tag, a dot, then the random part.
    const [tag, random] = sessionId.split('.') as [string, string];
    expect(tag).toMatch(/^[A-Za-z0-9_-]{4}$/);
    expect(Buffer.from(random, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
    const stored = await conn.keys(`${keys.prefix}:*`);
    expect(stored).toEqual([`${keys.prefix}:{${tag}}:session:${Keys.digest(sessionId)}`]);
    expect(stored.join()).not.toContain(sessionId);
    expect(await conn.hget(keys.session(sessionId), 'protocolVersion')).toBe('2025-11-25');

    const negotiate = async (protocolVersion: string) => {
      const body = { ...INIT, params: { ...INIT.params, protocolVersion } };
      const reply = await raw(url, { headers: postHeaders(), body: JSON.stringify(body) });
      return (reply.json() as { result: { protocolVersion: string } }).result.protocolVersion;
    };
    expect(await negotiate('2025-06-18')).toBe('2025-06-18');
    expect(await negotiate('2024-11-05')).toBe('2024-11-05');
    expect(await negotiate('1999-01-01')).toBe('2025-11-25');
  });

  it('[CAP-1][CAP-3] declares tools, resources, prompts, completions, logging and tasks { list, cancel, requests.tools.call }', async () => {
    const { url } = await start({ tools: false });
    const { client } = await connectClient(url);
    expect(client.getServerCapabilities()).toEqual({
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
      logging: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
    expect(client.getServerVersion()).toEqual({ name: 'taskgate', version: '0.1.0' });
  });

  it('needs a session: missing → 400, unknown → 404, ended by DELETE → 404', async () => {
    const { url } = await start({ tools: false });
    const missing = await raw(url, {
      headers: postHeaders(),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(missing.status).toBe(400);
    expect(rpcError(missing.json())).toEqual({
      code: -32600,
      message: 'Bad Request: the Mcp-Session-Id header is required; send initialize first',
    });
    const unknown = await rawCall(url, 'A'.repeat(43), 'ping');
    expect(unknown.status).toBe(404);
    expect(rpcError(unknown.json()).code).toBe(-32001);

    const sessionId = await rawInitialize(url);
    expect((await rawCall(url, sessionId, 'ping')).status).toBe(200);
    const ended = await raw(url, { method: 'DELETE', headers: postHeaders(sessionId) });
    expect(ended.status).toBe(200);
    expect((await rawCall(url, sessionId, 'ping')).status).toBe(404);
    expect((await raw(url, { method: 'DELETE', headers: postHeaders(sessionId) })).status).toBe(404);
    const reinit = await raw(url, { headers: postHeaders(sessionId), body: JSON.stringify(INIT) });
    expect(reinit.status).toBe(400);
  });

  it('ends idle sessions after the sliding idle expiry', async () => {
    // Margins of 600 ms either way: loaded CI machines delay requests by a few hundred ms.
    const { url } = await start({ tools: false, gateway: { sessionIdleTtlMs: 1000 } });
    const sessionId = await rawInitialize(url);
    for (let i = 0; i < 3; i++) {
      await sleepMs(400);
      expect((await rawCall(url, sessionId, 'ping')).status).toBe(200);
    }
    await sleepMs(1600);
    expect((await rawCall(url, sessionId, 'ping')).status).toBe(404);
  });

  it('checks MCP-Protocol-Version: unsupported → 400, absent → accepted', async () => {
    const { url } = await start({ tools: false });
    const sessionId = await rawInitialize(url);
    const bad = await rawCall(url, sessionId, 'ping', undefined, { 'MCP-Protocol-Version': '2099-01-01' });
    expect(bad.status).toBe(400);
    expect(rpcError(bad.json())).toEqual({
      code: -32600,
      message: "Bad Request: unsupported MCP-Protocol-Version '2099-01-01'",
    });
    const headers = postHeaders(sessionId);
    delete headers['MCP-Protocol-Version'];
    const absent = await raw(url, { headers, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }) });
    expect(absent.json()).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
  });

  it('answers notifications and responses with 202, unknown methods with -32601, bad params with -32602', async () => {
    const { url } = await start({ tools: false });
    const sessionId = await rawInitialize(url);
    for (const method of ['notifications/initialized', 'notifications/whatever', 'notifications/cancelled']) {
      const params = method === 'notifications/cancelled' ? { requestId: 99 } : undefined;
      const response = await raw(url, {
        headers: postHeaders(sessionId),
        body: JSON.stringify({ jsonrpc: '2.0', method, ...(params && { params }) }),
      });
      expect(response.status, method).toBe(202);
      expect(response.text).toBe('');
    }
    const badCancel = await raw(url, {
      headers: postHeaders(sessionId),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: {} } }),
    });
    expect(badCancel.status).toBe(400);
    const strayAnswer = await raw(url, {
      headers: postHeaders(sessionId),
      body: JSON.stringify({ jsonrpc: '2.0', id: 'in-unknown', result: {} }),
    });
    expect(strayAnswer.status).toBe(400);

    const unknown = await rawCall(url, sessionId, 'roots/list');
    expect(unknown.status).toBe(200);
    expect(unknown.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32601, message: 'Method not found: roots/list' },
    });
    const badParams = await rawCall(url, sessionId, 'tasks/get', { taskId: 42 });
    expect(rpcError(badParams.json()).code).toBe(-32602);
    expect(rpcError(badParams.json()).message).toMatch(/^Invalid params for tasks\/get: params\.taskId/);
    const setLevel = await rawCall(url, sessionId, 'logging/setLevel', { level: 'warning' });
    expect(setLevel.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('[CAP-4] answers a request type it declared no task support for normally, ignoring task metadata', async () => {
    const { url } = await start({ tools: false });
    const sessionId = await rawCall(url, await rawInitialize(url), 'ping', { task: { ttl: 1000 } });
    expect(sessionId.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    const list = await rawCall(url, await rawInitialize(url), 'tasks/list', { task: {} });
    expect(list.json()).toEqual({ jsonrpc: '2.0', id: 1, result: { tasks: [] } });
  });

  it('answers other HTTP methods with 405 and keeps health endpoints unguarded', async () => {
    const { url } = await start({ tools: false });
    const put = await raw(url, { method: 'PUT', headers: postHeaders() });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, POST, DELETE');
    const base = new URL(url);
    expect((await raw(`${base.origin}/healthz`, { method: 'GET', headers: { Host: 'pod-10-0-0-7' } })).json()).toEqual({
      status: 'ok',
    });
    expect((await raw(`${base.origin}/readyz`, { method: 'GET' })).status).toBe(200);
  });

  it('refuses deeply nested messages with 400 and -32600 (a response to no request used to fail with 500)', async () => {
    const { url, redis: conn, keys } = await start({ tools: false });
    const sessionId = await rawInitialize(url);
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    // The message is level 1: the path shown is the first 80 characters of the one to level 65.
    const shown = (path: string): string => `${path.padEnd(path.length + 200, '.a').slice(0, 80)}…`;
    // A response has no request id to answer with (null); the request's id is read before its depth is checked.
    const bodies: Array<[string, string, string | number | null]> = [
      [`{"jsonrpc":"2.0","id":"r-1","result":{"x":${deep}}}`, shown('result.x'), null],
      [
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":0,"x":${deep}},"task":{}}}`,
        shown('params.arguments.x'),
        1,
      ],
    ];
    for (const [body, at, id] of bodies) {
      const response = await raw(url, { headers: postHeaders(sessionId), body });
      expect(response.status).toBe(400);
      expect(response.json()).toEqual({
        jsonrpc: '2.0',
        id,
        error: { code: -32600, message: `Invalid Request: the body nests deeper than 64 levels (at ${at})` },
      });
    }
    expect(await conn.keys(`${keys.prefix}:*task*`)).toEqual([]);
  });

  it('answers what the HTTP parser refuses with a JSON-RPC error too (none for a HEAD): 431 for huge headers, 400 for broken HTTP', async () => {
    const { url } = await start({ tools: false });
    const { port } = new URL(url);
    const exchange = (request: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
        let answer = '';
        socket.on('data', (chunk: Buffer) => {
          answer += chunk.toString();
        });
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
      });
    const huge = await exchange(`POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4))).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Request Header Fields Too Large: the request headers exceed the limit' },
    });
    // A HEAD gets the status and headers only.
    const head = await exchange(`HEAD /mcp HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head.endsWith('\r\n\r\n')).toBe(true);
    const broken = await exchange('NOT HTTP AT ALL\r\n\r\n');
    expect(broken).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(broken.slice(broken.indexOf('\r\n\r\n') + 4))).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Bad Request: the request is not valid HTTP/1.1' },
    });
    // The server goes on serving.
    expect((await raw(url.replace('/mcp', '/healthz'), { method: 'GET' })).status).toBe(200);
  });

  it('answers HEAD with 405 instead of running the GET handler (which would open the session stream)', async () => {
    const { url, redis: conn, keys } = await start({ tools: false });
    const sessionId = await rawInitialize(url);
    const head = await raw(url, {
      method: 'HEAD',
      headers: { ...postHeaders(sessionId), Accept: 'text/event-stream' },
    });
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe('GET, POST, DELETE');
    expect(await conn.exists(keys.sessionStream(sessionId))).toBe(0);
  });

  it('allows one GET stream per session (409 for a second), and ends it when the session ends', async () => {
    const { url } = await start({ tools: false });
    const sessionId = await rawInitialize(url);
    const controller = new AbortController();
    const first = await fetch(url, {
      headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
      signal: controller.signal,
    });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    const second = await raw(url, {
      method: 'GET',
      headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId },
    });
    expect(second.status).toBe(409);
    const notSse = await raw(url, {
      method: 'GET',
      headers: { Accept: 'application/json', 'Mcp-Session-Id': sessionId },
    });
    expect(notSse.status).toBe(406);
    // DELETE on the session ends the open stream, wherever it is (after its priming event: an id, no data).
    const body = first.text();
    expect((await raw(url, { method: 'DELETE', headers: postHeaders(sessionId) })).status).toBe(200);
    expect(await body).toMatch(/^id: [A-Za-z0-9_-]{26}_\d+-1\nretry: 1000\ndata: \n\n$/);
  });
});
