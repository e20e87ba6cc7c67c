import { IncomingMessage, ServerResponse } from 'node:http';
import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it, vi } from 'vitest';
import { createGateway } from '../src/index.js';
import { CURSOR_SECRET } from './support/stack.js';

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'classes', version: '1' } },
};

describe("the gateway's HTTP server", () => {
  const redis = useRedis();

  it("makes express's request and response itself: a POST to the MCP path changes no prototype", async () => {
    const gateway = createGateway({ redis: redis.connect(), keyPrefix: redis.prefix, cursorSecret: CURSOR_SECRET });
    const setPrototypeOf = vi.spyOn(Object, 'setPrototypeOf');
    try {
      const { url } = await gateway.listen(0);
      const opened = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(INITIALIZE) });
      expect(opened.status).toBe(200);
      const sessionId = opened.headers.get('mcp-session-id') ?? '';
      const ping = await fetch(url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' }),
      });
      expect(opened.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-/);
      expect(await ping.json()).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
      const messages = setPrototypeOf.mock.calls.filter(
        ([target]) => target instanceof IncomingMessage || target instanceof ServerResponse,
      );
      expect(messages).toHaveLength(0);
      // The router's requests (not the MCP path's POSTs) are express's as well.
      const health = await fetch(url.replace(/\/mcp$/, '/healthz'));
      expect(await health.json()).toEqual({ status: 'ok' });
    } finally {
      setPrototypeOf.mockRestore();
      await gateway.close();
    }
  });
});
