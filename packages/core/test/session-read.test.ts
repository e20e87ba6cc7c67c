import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { Keys, SessionStore } from '../src/index.js';

describe("a session's read", () => {
  const redis = useRedis();

  it('fails when Redis fails it, rather than calling the session unknown (a client would drop it on a 404)', async () => {
    const keys = new Keys(redis.prefix);
    const creator = new SessionStore({ redis: redis.connect(), keys, idleTtlMs: 60_000, maxPerPrincipal: 0 });
    const { sessionId } = await creator.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    // A fresh store reads with the idle-ttl refresh (a pipeline); the key answers that read with an error.
    const reader = new SessionStore({ redis: redis.connect(), keys, idleTtlMs: 60_000, maxPerPrincipal: 0 });
    expect(await reader.get(sessionId)).toMatchObject({ sessionId, protocolVersion: '2025-11-25' });
    const other = new SessionStore({ redis: redis.connect(), keys, idleTtlMs: 60_000, maxPerPrincipal: 0 });
    const connection = redis.connect();
    await connection.del(keys.session(sessionId));
    await connection.set(keys.session(sessionId), 'not a hash');
    await expect(other.get(sessionId)).rejects.toThrow(/WRONGTYPE/);
    // A session that is not there is still unknown, not an error.
    await connection.del(keys.session(sessionId));
    expect(
      await new SessionStore({ redis: redis.connect(), keys, idleTtlMs: 60_000, maxPerPrincipal: 0 }).get(sessionId),
    ).toBeUndefined();
  });
});
