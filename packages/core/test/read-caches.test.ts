import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { type CatalogEntry, Keys, SessionStore, ToolCatalog } from '../src/index.js';
import { sleep } from './support.js';

const tool = (description: string): CatalogEntry => ({
  tool: { name: 'resize', description, inputSchema: { type: 'object' }, execution: { taskSupport: 'optional' } },
  queue: 'tool.resize',
  attempts: 1,
});

describe('what gateways keep in memory between requests', () => {
  const redis = useRedis();

  it('a catalog with cacheMs answers a found tool from memory until invalidated or expired; misses are never kept', async () => {
    const keys = new Keys(redis.prefix);
    const writer = new ToolCatalog({ redis: redis.connect(), keys });
    const cached = new ToolCatalog({ redis: redis.connect(), keys, cacheMs: 300 });
    expect(await cached.get('resize')).toBeUndefined();
    // A miss is not remembered: the tool is there as soon as a worker registers it.
    await writer.register([tool('v1')]);
    expect((await cached.get('resize'))?.tool.description).toBe('v1');
    await writer.register([tool('v2')]);
    expect((await cached.get('resize'))?.tool.description).toBe('v1');
    // What the gateway does when the tools channel announces the change.
    cached.invalidate();
    expect((await cached.get('resize'))?.tool.description).toBe('v2');
    await writer.register([tool('v3')]);
    await sleep(350);
    expect((await cached.get('resize'))?.tool.description).toBe('v3');
    // Without cacheMs every get reads Redis.
    await writer.register([tool('v4')]);
    expect((await writer.get('resize'))?.tool.description).toBe('v4');
  });

  it('a busy session has its idle expiry pushed back at most every tenth of the idle ttl', async () => {
    const connection = redis.connect();
    const keys = new Keys(redis.prefix);
    const sessions = new SessionStore({ redis: connection, keys, idleTtlMs: 2000 });
    const { sessionId } = await sessions.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    const key = keys.session(sessionId);
    expect(await sessions.get(sessionId)).toMatchObject({ sessionId });
    await connection.pexpire(key, 1000);
    // Within 200 ms of the last push: read, not pushed back.
    expect(await sessions.get(sessionId)).toMatchObject({ sessionId });
    expect(await connection.pttl(key)).toBeLessThanOrEqual(1000);
    await sleep(250);
    expect(await sessions.get(sessionId)).toMatchObject({ sessionId });
    expect(await connection.pttl(key)).toBeGreaterThan(1500);
    // An ended session is gone at once, whatever was remembered.
    await sessions.end(sessionId);
    expect(await sessions.get(sessionId)).toBeUndefined();
  });
});
