import { scrape, startRedis, useRedis } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../src/index.js';
import { rev2026Request, TASKS } from './support/rev2026-07-28.js';
import { CURSOR_SECRET } from './support/stack.js';

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('the runner of both revisions', () => {
  const redis = useRedis();

  it('answers a request of either revision 503 with Retry-After and its id while Redis is down, counted on both', async () => {
    const server = await startRedis();
    const connection = new Redis(server.url, { maxRetriesPerRequest: 1 });
    const gateway = createGateway({ redis: connection, keyPrefix: redis.prefix, cursorSecret: CURSOR_SECRET });
    try {
      const { url } = await gateway.listen(0);
      const opened = await fetch(url, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'runner', version: '1' } },
        }),
      });
      const sessionId = opened.headers.get('mcp-session-id') ?? '';
      const onSession = (body: Record<string, unknown>) =>
        fetch(url, {
          method: 'POST',
          headers: { ...JSON_HEADERS, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
          body: JSON.stringify({ jsonrpc: '2.0', ...body }),
        });
      // A first request refreshes the session's idle ttl; the next one within a while only reads the session.
      expect(await (await onSession({ id: 'up', method: 'ping' })).json()).toEqual({
        jsonrpc: '2.0',
        id: 'up',
        result: {},
      });
      await server.stop();

      const legacy = await onSession({ id: 'legacy-1', method: 'tasks/get', params: { taskId: 'x' } });
      expect(legacy.status).toBe(503);
      expect(legacy.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await legacy.json()).toMatchObject({ jsonrpc: '2.0', id: 'legacy-1', error: { code: -32603 } });

      const statelessly = await rev2026Request(
        url,
        'tasks/get',
        { taskId: 'x' },
        { capabilities: { extensions: { [TASKS]: {} } } },
      );
      expect(statelessly.status).toBe(503);
      expect(statelessly.body.error?.code).toBe(-32603);

      const metrics = await scrape(`${url.replace(/\/mcp$/, '')}/metrics`);
      expect(metrics.value('taskgate_rpc_errors_total', { method: 'tasks/get', code: '-32603' })).toBe(2);
      expect(metrics.value('taskgate_rpc_requests_total', { method: 'tasks/get' })).toBe(2);
    } finally {
      await gateway.close();
      connection.disconnect();
    }
  });
});
