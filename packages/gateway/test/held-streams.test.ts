import { EventLog, GatewayRegistry, Keys, noopLogger, TaskDelivery, TaskStore } from '@taskgate/core';
import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { HeldStreams } from '../src/streams/held-streams.js';
import { StreamRegistry } from '../src/streams/stream-registry.js';

describe('HeldStreams', () => {
  const redis = useRedis();

  const setUp = () => {
    const connection = redis.connect();
    const keys = new Keys(redis.prefix);
    const events = new EventLog({ redis: connection, keys });
    const delivery = new TaskDelivery({ redis: connection, keys });
    const store = new TaskStore({ redis: connection, keys, cursorSecret: 'held-streams-test-secret-0123456789' });
    const held = (gatewayId: string) =>
      new HeldStreams({
        registry: new GatewayRegistry({ redis: connection, keys, gatewayId }),
        events,
        delivery,
        streams: new StreamRegistry(),
        beatMs: 60_000,
        deadAfterMs: 1000,
        retryMs: 100,
        logger: noopLogger,
      });
    /** A task stream opened by `gatewayId`, holding its connection lease and the task's carrier lease for an hour. */
    const open = async (registry: GatewayRegistry) => {
      const { taskId } = await store.create({ owner: 'owner', kind: 'task', tool: 'idle' });
      const ids = { streamId: EventLog.newStreamId('owner'), connectionId: EventLog.newConnectionId() };
      await registry.hold({ ...ids, taskId });
      const state = { streamId: ids.streamId, kind: 'result' as const, session: 'digest', taskId, rpcId: 1 };
      await events.create(state, ids.connectionId, 3_600_000);
      expect(await delivery.claim(taskId, ids.streamId, ids.connectionId, 3_600_000)).toBe('ok');
      return { ...ids, taskId };
    };
    return { connection, keys, events, delivery, held, open };
  };

  it('releases the leases of a gateway that stopped beating, except those of a stream resumed elsewhere', async () => {
    const { connection, keys, events, held, open } = setUp();
    const dead = new GatewayRegistry({ redis: connection, keys, gatewayId: 'dead-gateway' });
    expect(await dead.beat(Date.now() - 5000)).toBe(true);
    const lost = await open(dead);
    const resumed = await open(dead);
    // A client resumed the second stream on another pod: the newest connection holds it now.
    await events.takeConnection(resumed.streamId, 'other-connection', 3_600_000);

    const alive = held('alive-gateway');
    // Its first beat only records it (it may just be back from a Redis outage); the next one judges.
    await alive.start();
    expect(await connection.exists(keys.sseConnection(lost.streamId))).toBe(1);
    await alive.tick();
    expect(await connection.exists(keys.sseConnection(lost.streamId))).toBe(0);
    expect(await connection.exists(keys.taskCarrier(lost.taskId))).toBe(0);
    expect(await connection.get(keys.sseConnection(resumed.streamId))).toBe('other-connection');
    expect(await connection.get(keys.taskCarrier(resumed.taskId))).toBe(resumed.streamId);
    // The dead gateway is forgotten; the live one is recorded.
    expect(await connection.zrange(keys.gateways(), 0, -1)).toEqual(['alive-gateway']);
    expect(await connection.exists(keys.gatewayStreams('dead-gateway'))).toBe(0);
    await alive.stop();
    expect(await connection.zcard(keys.gateways())).toBe(0);
  });

  it('leaves a beating gateway alone, and tells one that was taken for dead', async () => {
    const { connection, keys, held, open } = setUp();
    const registry = new GatewayRegistry({ redis: connection, keys, gatewayId: 'slow-gateway' });
    expect(await registry.beat()).toBe(true);
    const stream = await open(registry);
    const alive = held('alive-gateway');
    await alive.tick();
    await alive.tick();
    expect(await connection.get(keys.taskCarrier(stream.taskId))).toBe(stream.streamId);
    expect(await registry.beat()).toBe(true);
    // Silent for longer than deadAfterMs: released; its next beat finds it out.
    await connection.zadd(keys.gateways(), Date.now() - 5000, 'slow-gateway');
    await alive.tick();
    expect(await connection.exists(keys.taskCarrier(stream.taskId))).toBe(0);
    expect(await registry.beat()).toBe(false);
    expect(await registry.beat()).toBe(true);
  });
});
