import { useRedis } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { Keys, SessionCache, SessionStore } from '../src/index.js';
import { sleep, waitFor } from './support.js';

describe('the session cache (CLIENT TRACKING)', () => {
  const redis = useRedis();
  const caches: SessionCache[] = [];
  afterEach(async () => {
    await Promise.all(caches.splice(0).map((cache) => cache.close()));
  });

  /** A gateway's store with a live cache, and another gateway's store without one (the writer). */
  async function twoGateways(): Promise<{
    cached: SessionStore;
    cache: SessionCache;
    other: SessionStore;
    keys: Keys;
    connection: Redis;
  }> {
    const keys = new Keys(redis.prefix);
    const connection = redis.connect();
    const cache = SessionCache.open({ redis: connection });
    if (cache === undefined) throw new Error('no cache on a single server');
    caches.push(cache);
    await waitFor(() => cache.live, 'tracking set up');
    const cached = new SessionStore({ redis: connection, keys, idleTtlMs: 600_000, cache });
    const other = new SessionStore({ redis: redis.connect(), keys, idleTtlMs: 600_000 });
    return { cached, cache, other, keys, connection };
  }

  /** The session read once with the expiry refresh (never cached) and once into the cache. */
  async function warm(store: SessionStore, sessionId: string): Promise<void> {
    await store.get(sessionId);
    await store.get(sessionId);
  }

  it('reads a busy session from Redis once, then from memory', async () => {
    const { cached, cache, other, connection } = await twoGateways();
    const { sessionId } = await other.create({ protocolVersion: '2025-11-25', clientCapabilities: { sampling: {} } });
    await warm(cached, sessionId);
    expect(cache.reads).toBe(1);
    for (let i = 0; i < 5; i++) {
      expect(await cached.get(sessionId)).toMatchObject({ sessionId, clientCapabilities: { sampling: {} } });
    }
    expect(cache.reads).toBe(1);
    expect(cache.size).toBe(1);
    // Tracking on the commands connection covers only the reads the cache asks for (OPTIN), until it closes.
    const flags = async (): Promise<string[]> => {
      const info = (await connection.call('CLIENT', 'TRACKINGINFO')) as unknown[];
      return (info[info.indexOf('flags') + 1] as string[]).map(String);
    };
    expect(await flags()).toEqual(expect.arrayContaining(['on', 'optin']));
    const listeners = connection.listenerCount('ready') + connection.listenerCount('close');
    await cache.close();
    expect(await flags()).toEqual(['off']);
    // The commands connection outlives the cache without its listeners.
    expect(connection.listenerCount('ready') + connection.listenerCount('close')).toBe(listeners - 2);
  });

  it('keeps no unknown session: a probe of ids reads Redis each time and holds nothing', async () => {
    const { cached, cache, other } = await twoGateways();
    const { sessionId } = await other.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    await other.end(sessionId);
    for (let i = 0; i < 3; i++) expect(await cached.get(sessionId)).toBeUndefined();
    // An unknown session is never refreshed, so each of its reads is the refresh's, beside the cache.
    expect(cache.reads).toBe(0);
    expect(cache.size).toBe(0);
  });

  it('drops a session ended on another gateway as soon as Redis says so', async () => {
    const { cached, cache, other } = await twoGateways();
    const { sessionId } = await other.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    await warm(cached, sessionId);
    expect(cache.size).toBe(1);
    expect(await other.end(sessionId)).toBe(true);
    await waitFor(() => cache.size === 0, 'the invalidation', 1000);
    expect(await cached.get(sessionId)).toBeUndefined();
  });

  it('sees a log level set on another gateway, and one set here at once', async () => {
    const { cached, cache, other } = await twoGateways();
    const { sessionId } = await other.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    await warm(cached, sessionId);
    await other.setLogLevel(sessionId, 'debug');
    await waitFor(async () => (await cached.get(sessionId))?.logLevel === 'debug', 'the new level', 1000);
    await cached.setLogLevel(sessionId, 'error');
    expect((await cached.get(sessionId))?.logLevel).toBe('error');
    expect(cache.reads).toBeGreaterThanOrEqual(3);
  });

  it('drops a session whose key expires or is deleted by hand', async () => {
    const { cached, cache, other, keys } = await twoGateways();
    const first = await other.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    const second = await other.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    await warm(cached, first.sessionId);
    await warm(cached, second.sessionId);
    expect(cache.size).toBe(2);
    const raw = redis.connect();
    // The new expiry is a change (an invalidation) too: the session is read again, then held until it expires.
    await raw.pexpire(keys.session(first.sessionId), 400);
    await waitFor(() => cache.size === 1, 'the invalidation of the new expiry', 1000);
    expect(await cached.get(first.sessionId)).toMatchObject({ sessionId: first.sessionId });
    expect(cache.size).toBe(2);
    await raw.del(keys.session(second.sessionId));
    await waitFor(() => cache.size === 1, 'the invalidation of the delete', 1000);
    // Redis's active expiry finds the key within a second or two; the entry would go after 5 s at most anyway.
    await waitFor(() => cache.size === 0, 'the invalidation of the expiry', 4000);
    expect(await cached.get(first.sessionId)).toBeUndefined();
    expect(await cached.get(second.sessionId)).toBeUndefined();
  });

  it('empties itself when a connection drops, and sets tracking up again on the new ones', async () => {
    const { cached, cache, other } = await twoGateways();
    const { sessionId } = await other.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    await warm(cached, sessionId);
    const admin = redis.connect();
    for (const type of ['pubsub', 'normal'] as const) {
      expect(cache.size).toBe(1);
      // The invalidations connection first (its new id is tracked anew), then every plain connection.
      await admin.call('CLIENT', 'KILL', 'TYPE', type, 'SKIPME', 'yes');
      await waitFor(() => !cache.live, `the drop of the ${type} connection`, 2000);
      expect(cache.size).toBe(0);
      await waitFor(() => cache.live, 'tracking set up again', 5000);
      const reads = cache.reads;
      await cached.get(sessionId);
      expect(cache.reads).toBe(reads + 1);
      await cached.get(sessionId);
      expect(cache.reads).toBe(reads + 1);
      // A change made now reaches the new connections.
      await other.setLogLevel(sessionId, type === 'pubsub' ? 'debug' : 'error');
      await waitFor(() => cache.size === 0, 'the invalidation on the new connection', 1000);
      await cached.get(sessionId);
    }
  });

  it('keeps nothing a write overtook while it was read (the invalidation came first)', async () => {
    const { cached, cache, other, keys } = await twoGateways();
    const { sessionId } = await other.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    await warm(cached, sessionId);
    // Many rounds of a read racing a write of another connection: the cache must end on the last value.
    const raw: Redis = redis.connect();
    for (let i = 0; i < 50; i++) {
      const level = i % 2 === 0 ? 'debug' : 'info';
      await Promise.all([cached.get(sessionId), raw.hset(keys.session(sessionId), 'logLevel', level)]);
    }
    await sleep(50);
    expect((await cached.get(sessionId))?.logLevel).toBe('info');
    expect(cache.live).toBe(true);
  });

  it('sets tracking up again when its connection drops in the middle of a set-up', async () => {
    const connection = redis.connect();
    const refusals: Error[] = [];
    const cache = SessionCache.open({ redis: connection, onSetUpFailed: (error) => refusals.push(error) });
    if (cache === undefined) throw new Error('no cache on a single server');
    caches.push(cache);
    await waitFor(() => cache.live, 'tracking set up');
    // The next set-up's SUBSCRIBE meets a socket that has just gone (as a reset does, before ioredis notices).
    const invalidations = cache.connection;
    const subscribe = invalidations.subscribe.bind(invalidations);
    let cut = 0;
    invalidations.subscribe = ((...channels: string[]) => {
      if (cut++ === 0) invalidations.stream.destroy();
      return subscribe(...channels);
    }) as typeof invalidations.subscribe;
    const admin = redis.connect();
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub', 'SKIPME', 'yes');
    await waitFor(() => cut >= 2 && cache.live, 'tracking set up on the connection after the cut one', 5000);
    expect(refusals.map((error) => error.message)).toEqual([]);
    // The new connection is the one tracked: a change made now reaches the cache.
    const keys = new Keys(redis.prefix);
    const cached = new SessionStore({ redis: connection, keys, idleTtlMs: 600_000, cache });
    const other = new SessionStore({ redis: admin, keys, idleTtlMs: 600_000 });
    const { sessionId } = await other.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    await warm(cached, sessionId);
    expect(cache.size).toBe(1);
    await other.setLogLevel(sessionId, 'debug');
    await waitFor(() => cache.size === 0, 'the invalidation on the new connection', 1000);
  });

  it('serves nothing and reports it when Redis refuses tracking', async () => {
    const admin = redis.connect();
    const user = `nocache${redis.prefix.replace(/[^A-Za-z0-9]/g, '')}`;
    await admin.acl('SETUSER', user, 'on', '>secret-password-1', '~*', '&*', '+@all', '-client|tracking');
    const connection = redis.connect({ username: user, password: 'secret-password-1' });
    const refusals: Error[] = [];
    const cache = SessionCache.open({ redis: connection, onSetUpFailed: (error) => refusals.push(error) });
    if (cache === undefined) throw new Error('no cache on a single server');
    try {
      await waitFor(() => refusals.length > 0, 'the refusal', 3000);
      expect(refusals[0]?.message).toMatch(/NOPERM/);
      expect(cache.live).toBe(false);
      const keys = new Keys(redis.prefix);
      const store = new SessionStore({ redis: connection, keys, idleTtlMs: 600_000, cache });
      const { sessionId } = await store.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
      await warm(store, sessionId);
      expect(await store.get(sessionId)).toMatchObject({ sessionId });
      expect(cache.reads).toBe(0);
    } finally {
      // Closed before the user goes: Redis drops a deleted user's connections, which could not log in again.
      await cache.close();
      connection.disconnect();
      await admin.acl('DELUSER', user);
    }
  });
});
