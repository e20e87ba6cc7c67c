import { connect as connectTcp } from 'node:net';
import { type RabbitMQ, startRabbitMQ } from '@taskgate/test-harness';
import { connect } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The harness's private RabbitMQ node: an AMQP connection works, durable queues and persistent messages survive a
// restart on the same port, two nodes never share a name or a port, and stop leaves nothing listening.

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

let first: RabbitMQ;
let second: RabbitMQ;

beforeAll(async () => {
  [first, second] = await Promise.all([startRabbitMQ(), startRabbitMQ()]);
}, 240_000);

afterAll(async () => {
  await Promise.all([first?.stop(), second?.stop()]);
});

describe('startRabbitMQ', () => {
  it('starts private nodes: names and ports of their own', () => {
    expect(first.nodeName).not.toBe(second.nodeName);
    expect(first.port).not.toBe(second.port);
    expect(first.epmdPort).not.toBe(second.epmdPort);
    expect(first.url).toBe(`amqp://guest:guest@127.0.0.1:${first.port}/%2F`);
  });

  it('keeps durable queues and persistent messages across a restart; rabbitmqctl reaches the node', async () => {
    const connection = await connect(first.url);
    const channel = await connection.createConfirmChannel();
    await channel.assertQueue('harness.durable', { durable: true });
    channel.sendToQueue('harness.durable', Buffer.from('kept'), { persistent: true });
    await channel.waitForConfirms();
    await connection.close();
    const pid = first.pid;
    await first.restart();
    expect(first.pid).not.toBe(pid);
    const again = await connect(first.url);
    const reader = await again.createChannel();
    const message = await reader.get('harness.durable', { noAck: true });
    expect(message === false ? undefined : message.content.toString()).toBe('kept');
    await again.close();
    expect(await first.ctl(['list_queues', 'name', 'durable'])).toMatch(/harness\.durable\s+true/);
  }, 180_000);

  it('stop leaves the AMQP port and its epmd closed, and the other node running', async () => {
    const { port, epmdPort } = second;
    expect(await refused(epmdPort)).toBe(false);
    await second.stop();
    expect(await refused(port)).toBe(true);
    expect(await refused(epmdPort)).toBe(true);
    const connection = await connect(first.url);
    await connection.close();
  }, 60_000);
});
