import { postHeaders, raw, useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { useStacks } from './support/stack.js';

describe('JSON-RPC error ids', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('answers every error with the request id when it could be read, null otherwise (JSON-RPC 2.0)', async () => {
    const { url } = await start({ tools: false });
    const parseError = await raw(url, { headers: postHeaders(), body: '{"jsonrpc": "2.0", "id": 2, "method": ' });
    expect(parseError.status).toBe(400);
    expect(parseError.text).toBe(
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the body is not valid JSON"}}',
    );
    const noSession = await raw(url, {
      headers: postHeaders(),
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(noSession.status).toBe(400);
    expect(noSession.text).toBe(
      '{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Bad Request: the Mcp-Session-Id header is ' +
        'required; send initialize first"}}',
    );
    // A message that is not valid JSON-RPC still names its id when it has one.
    const invalid = await raw(url, {
      headers: postHeaders(),
      body: JSON.stringify({ jsonrpc: '1.0', id: 'seven', method: 'ping' }),
    });
    expect(invalid.status).toBe(400);
    expect(invalid.json()).toMatchObject({ jsonrpc: '2.0', id: 'seven', error: { code: -32600 } });
    // Refused before the body is read (the Accept header): no id could be read.
    const notAcceptable = await raw(url, {
      headers: { ...postHeaders(), Accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }),
    });
    expect(notAcceptable.status).toBe(406);
    expect(notAcceptable.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it('answers an HTTP-level refusal of a session request with its id, and a GET (no body) with null', async () => {
    const { url } = await start({ tools: false });
    const unknown = await raw(url, {
      headers: postHeaders('A'.repeat(43)),
      body: JSON.stringify({ jsonrpc: '2.0', id: 'req-9', method: 'ping' }),
    });
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toMatchObject({ jsonrpc: '2.0', id: 'req-9', error: { code: -32001 } });
    const get = await raw(url, { method: 'GET', headers: { ...postHeaders(), Accept: 'text/event-stream' } });
    expect(get.status).toBe(400);
    expect(get.text).toBe(
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: the Mcp-Session-Id header is ' +
        'required; send initialize first"}}',
    );
  });
});
