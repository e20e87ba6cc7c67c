import { ErrorCode } from '@taskgate/protocol';
import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { TaskRefusal } from '../src/errors.js';
import { Keys, SessionStore } from '../src/index.js';
import { sleep } from './support.js';

const input = (principal?: string) => ({
  ...(principal !== undefined && { principal }),
  protocolVersion: '2025-11-25',
  clientCapabilities: {},
});

describe('sessions per principal', () => {
  const redis = useRedis();
  const stores = (count: number, idleTtlMs = 60_000, maxPerPrincipal = 2) => {
    const keys = new Keys(redis.prefix);
    return Array.from(
      { length: count },
      () => new SessionStore({ redis: redis.connect(), keys, idleTtlMs, maxPerPrincipal }),
    );
  };

  it('are counted across every store (gateway): one more than the limit is refused with -32011', async () => {
    const [a, b] = stores(2) as [SessionStore, SessionStore];
    await a.create(input('alice'));
    await b.create(input('alice'));
    const refused = await a.create(input('alice')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TaskRefusal);
    expect(refused).toMatchObject({
      reason: 'SESSION_LIMIT_EXCEEDED',
      code: ErrorCode.SessionLimitExceeded,
      message:
        'Too many sessions: at most 2 sessions of one principal may be open at once. ' +
        'End one (DELETE with its Mcp-Session-Id) or wait for an idle one to expire, then try again.',
      data: { limit: 2 },
    });
    // Other principals, and sessions without one (auth off), are not affected.
    await b.create(input('bob'));
    await b.create(input());
    await b.create(input());
    await b.create(input());
  });

  it('an ended session frees its place at once; an idle one when it expires', async () => {
    const [a, b] = stores(2, 300) as [SessionStore, SessionStore];
    const first = await a.create(input('carol'));
    await a.create(input('carol'));
    await expect(b.create(input('carol'))).rejects.toMatchObject({ code: ErrorCode.SessionLimitExceeded });
    expect(await b.end(first.sessionId, first.principalId)).toBe(true);
    await b.create(input('carol'));
    await expect(a.create(input('carol'))).rejects.toMatchObject({ code: ErrorCode.SessionLimitExceeded });
    await sleep(400);
    await a.create(input('carol'));
    await a.create(input('carol'));
  });

  it('a session in use keeps its place past the idle ttl of its creation', async () => {
    const [a] = stores(1, 1500) as [SessionStore];
    const kept = await a.create(input('dave'));
    await a.create(input('dave'));
    for (let i = 0; i < 6; i++) {
      await sleep(300);
      expect(await a.get(kept.sessionId, 'dave')).toMatchObject({ sessionId: kept.sessionId });
    }
    // 1.8 s after creation: the other session idled out, the used one counts still.
    await a.create(input('dave'));
    await expect(a.create(input('dave'))).rejects.toMatchObject({ code: ErrorCode.SessionLimitExceeded });
  });

  it('refuses a negative limit', () => {
    expect(() => stores(1, 1000, -1)).toThrow('maxPerPrincipal must be a non-negative integer, got -1');
  });
});
