import { type RabbitMQ, startRabbitMQ } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AmqpConnection, AmqpPublishError } from '../src/amqp/connection.js';

// The bridge's AMQP connection against a real RabbitMQ node: confirmed publishes, unroutable messages returned,
// a missing exchange refused without losing the connection, and a reconnection (setups run again) after the node
// restarts.

let rabbit: RabbitMQ;
let connection: AmqpConnection;
const events: string[] = [];
let setups = 0;

beforeAll(async () => {
  rabbit = await startRabbitMQ();
  connection = new AmqpConnection({ name: 'rabbit', url: rabbit.url, maxBackoffMs: 500 });
  connection.on('connected', () => events.push('connected'));
  connection.on('disconnected', () => events.push('disconnected'));
  await connection.addSetup(async (model) => {
    const channel = await model.createChannel();
    await channel.assertQueue('connection.test', { durable: true });
    await channel.close();
    setups++;
  });
  connection.start();
  await connection.whenConnected();
}, 120_000);

afterAll(async () => {
  await connection?.close();
  await rabbit?.stop();
});

describe('AmqpConnection', () => {
  it('publishes with confirms: routed to a queue, or returned as unroutable', async () => {
    const body = Buffer.from('{}');
    expect(await connection.publish('', 'connection.test', body, { messageId: 'a', persistent: true })).toBe('routed');
    expect(await connection.publish('', 'nobody.listens', body, { messageId: 'b' })).toBe('unroutable');
    expect(await rabbit.ctl(['list_queues', 'name', 'messages'])).toMatch(/connection\.test\s+1/);
  });

  it('refuses a publish to a missing exchange and publishes on afterwards', async () => {
    const error = await connection
      .publish('no.such.exchange', 'x', Buffer.from('{}'), { messageId: 'c' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AmqpPublishError);
    expect((error as AmqpPublishError).code).toBe(404);
    expect(
      await connection.publish('', 'connection.test', Buffer.from('{}'), { messageId: 'd', persistent: true }),
    ).toBe('routed');
  });

  it('reconnects by itself after RabbitMQ restarts and runs its setups again', async () => {
    expect(setups).toBe(1);
    await rabbit.restart();
    await expect.poll(() => connection.connected && events.includes('disconnected'), { timeout: 30_000 }).toBe(true);
    expect(setups).toBe(2);
    expect(events).toEqual(['connected', 'disconnected', 'connected']);
    expect(await connection.publish('', 'connection.test', Buffer.from('{}'), { messageId: 'e' })).toBe('routed');
    expect(await rabbit.ctl(['list_queues', 'name', 'messages'])).toMatch(/connection\.test\s+3/);
  }, 120_000);
});
