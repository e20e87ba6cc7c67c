import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import {
  announceResourceUpdated,
  EventBus,
  Keys,
  ResourceInterest,
  ResourceSubscriptions,
  SessionStore,
} from '../src/index.js';
import { waitFor } from './support.js';

describe('ResourceSubscriptions', () => {
  const redis = useRedis();

  const setup = () => {
    const connection = redis.connect();
    const keys = new Keys(redis.prefix);
    const sessions = new SessionStore({ redis: connection, keys, idleTtlMs: 60_000 });
    const subscriptions = new ResourceSubscriptions({ redis: connection, keys, idleTtlMs: 60_000 });
    return { connection, keys, sessions, subscriptions };
  };

  it('keeps subscriptions per session, idempotent, and removes them on unsubscribe', async () => {
    const { sessions, subscriptions } = setup();
    const a = await sessions.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    const b = await sessions.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    await subscriptions.subscribe(a.sessionId, 'test://watched');
    await subscriptions.subscribe(a.sessionId, 'test://watched');
    await subscriptions.subscribe(a.sessionId, 'test://items/1');
    expect((await subscriptions.list(a.sessionId)).sort()).toEqual(['test://items/1', 'test://watched']);
    expect(await subscriptions.list(b.sessionId)).toEqual([]);
    expect(await subscriptions.unsubscribe(a.sessionId, 'test://watched')).toBe(true);
    expect(await subscriptions.unsubscribe(a.sessionId, 'test://watched')).toBe(false);
    expect(await subscriptions.list(a.sessionId)).toEqual(['test://items/1']);
    // The session record itself is untouched by its subscription fields.
    expect(await sessions.get(a.sessionId)).toMatchObject({ sessionId: a.sessionId, protocolVersion: '2025-11-25' });
  });

  it('keeps the URIs some session listens to across sessions, until the last one leaves or lapses', async () => {
    const { connection, keys, subscriptions } = setup();
    const interest = new ResourceInterest({ redis: connection, keys });
    await subscriptions.subscribe('session-a', 'test://watched');
    await subscriptions.subscribe('session-b', 'test://watched');
    await subscriptions.subscribe('session-b', 'test://other');
    expect(await interest.uris()).toEqual(new Set(['test://watched', 'test://other']));
    await subscriptions.unsubscribe('session-a', 'test://watched');
    expect(await interest.uris()).toEqual(new Set(['test://watched', 'test://other']));
    await subscriptions.unsubscribe('session-b', 'test://watched');
    expect(await interest.uris()).toEqual(new Set(['test://other']));
    // A session that ends without unsubscribing stops counting when its idle expiry passes.
    await interest.add('session-c', 'test://brief', 50);
    expect((await interest.uris()).has('test://brief')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await interest.uris()).toEqual(new Set(['test://other']));
    // Session ids are not in Redis in clear.
    const members = await connection.zrange(keys.resourceInterest(), 0, -1);
    expect(members.join()).not.toContain('session-b');
  });

  it('ends the subscriptions with the session', async () => {
    const { sessions, subscriptions } = setup();
    const session = await sessions.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    await subscriptions.subscribe(session.sessionId, 'test://watched');
    await sessions.end(session.sessionId);
    expect(await subscriptions.list(session.sessionId)).toEqual([]);
  });

  it('announces subscription changes to the session and resource updates to everyone', async () => {
    const { connection, keys, sessions, subscriptions } = setup();
    const session = await sessions.create({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    const bus = new EventBus(connection, keys);
    const heard: string[] = [];
    try {
      await bus.subscribe(keys.sessionSubscriptionsChannel(session.sessionId), (m) => heard.push(`subs:${m}`));
      await bus.subscribe(keys.resourceUpdatedChannel(), (m) => heard.push(`updated:${m}`));
      await subscriptions.subscribe(session.sessionId, 'test://watched');
      await subscriptions.unsubscribe(session.sessionId, 'test://watched');
      await announceResourceUpdated(connection, keys, 'test://watched');
      await waitFor(() => heard.length === 3, 'three messages');
      expect(heard).toEqual(['subs:changed', 'subs:changed', 'updated:test://watched']);
    } finally {
      await bus.close();
    }
  });
});
