import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventLog, Keys, noopLogger } from '@taskgate/core';
import { parseSse, startTcpRelay, type TcpRelay, useRedis } from '@taskgate/test-harness';
import type { RedisOptions } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { LoggedStream } from '../src/streams/logged-stream.js';
import { SseStream } from '../src/streams/sse-stream.js';

const LEASE_MS = 30_000;
const PROGRESS = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } };

/**
 * A logged stream as the gateway runs it (a session's GET stream, or a tasks/result stream): a real HTTP
 * response, an event log in a real Redis reached through a TCP relay that can cut the connection a reply comes
 * on (what a `reset_peer` on the Redis link does).
 */
describe('a stream whose log write ran in Redis while its reply was lost', () => {
  const redis = useRedis();
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function open(
    options: RedisOptions,
    kind: 'session' | 'result' = 'session',
  ): Promise<{ stream: LoggedStream; cutter: TcpRelay; body: () => string }> {
    const cutter = await startTcpRelay(redis.server.port);
    cleanups.push(() => cutter.close());
    const keys = new Keys(redis.prefix);
    const connection = redis.connect({ port: cutter.port, ...options });
    cleanups.push(() => connection.quit());
    const log = new EventLog({ redis: connection, keys });
    const ids = { streamId: EventLog.newStreamId('s'.repeat(40)), connectionId: EventLog.newConnectionId() };
    const feed = '1-0';
    let text = '';
    const state =
      kind === 'session'
        ? { streamId: ids.streamId, kind, session: 'digest', feedPosition: feed }
        : { streamId: ids.streamId, kind, session: 'digest', taskId: 'task-1' };
    await log.create(state, ids.connectionId, LEASE_MS);
    const responses = new Promise<ServerResponse>((resolve) => {
      const server: Server = createServer((_req, res) => resolve(res));
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        void fetch(`http://127.0.0.1:${port}/`).then(
          async (response) => {
            const reader = response.body?.getReader();
            const decoder = new TextDecoder();
            for (;;) {
              const chunk = await reader?.read();
              if (chunk === undefined || chunk.done) break;
              text += decoder.decode(chunk.value, { stream: true });
            }
          },
          () => {},
        );
      });
      cleanups.push(async () => {
        server.closeAllConnections();
        await new Promise((done) => server.close(done));
      });
    });
    const sse = new SseStream(await responses);
    const positions = kind === 'session' ? { log: '0-0', feed } : undefined;
    const stream = new LoggedStream(log, sse, ids, LEASE_MS, noopLogger, positions);
    cleanups.push(async () => stream.end());
    return { stream, cutter, body: () => text };
  }

  const relayInput = (entryId: string) => ({
    taskId: 'task-1',
    mode: 'fallback' as const,
    entryId,
    data: JSON.stringify({ ...PROGRESS, params: { ...PROGRESS.params, progress: Number(entryId.slice(0, 1)) } }),
    expiresAt: Date.now() + 60_000,
  });

  async function eventually(body: () => string, count: number): Promise<ReturnType<typeof parseSse>> {
    const until = Date.now() + 5000;
    while (parseSse(body()).messages.length < count && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    return parseSse(body());
  }

  it('writes the event when ioredis sends the script again and it finds the entry taken', async () => {
    // ioredis sends an unanswered command again on its next connection (`autoResendUnfulfilledCommands`).
    const { stream, cutter, body } = await open({ maxRetriesPerRequest: 3 });
    expect((await stream.relay(relayInput('1-1'))).kind).toBe('relayed');
    cutter.cutNextReply();
    // The first run moved the cursor and logged the event; the run sent again finds the cursor there.
    expect((await stream.relay(relayInput('2-1'))).kind).toBe('stale');
    const { messages, ids } = await eventually(body, 2);
    expect(messages.map((message) => (message as typeof PROGRESS).params.progress)).toEqual([1, 2]);
    // Each event names its log position, ordinals 1 and 2, and the stream's feed position.
    expect(ids.map((id) => id.slice(stream.streamId.length + 1).replace(/^\d+-/, ''))).toEqual(['1_1-0', '2_1-0']);
  });

  it('writes the event once the log can be read again when the relay failed without a reply', async () => {
    // No resend: the command fails, and nobody knows whether it ran (it did).
    const { stream, cutter, body } = await open({ maxRetriesPerRequest: 3, autoResendUnfulfilledCommands: false });
    expect((await stream.relay(relayInput('1-1'))).kind).toBe('relayed');
    cutter.cutNextReply();
    await expect(stream.relay(relayInput('2-1'))).rejects.toThrow();
    // Nothing else is written on the stream: the event comes from the stream's own read of its log.
    const { messages } = await eventually(body, 2);
    expect(messages.map((message) => (message as typeof PROGRESS).params.progress)).toEqual([1, 2]);
    // And only once: a later relay writes its own event after it, nothing again.
    expect((await stream.relay(relayInput('3-1'))).kind).toBe('relayed');
    const after = await eventually(body, 3);
    expect(after.messages.map((message) => (message as typeof PROGRESS).params.progress)).toEqual([1, 2, 3]);
  });

  it('writes an event its append logged twice once, when ioredis sends the append again (a tasks/result stream)', async () => {
    const { stream, cutter, body } = await open({ maxRetriesPerRequest: 3 }, 'result');
    const status = (text: string) => ({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: text },
    });
    expect(await stream.emit(status('first'))).toBe(true);
    cutter.cutNextReply();
    expect(await stream.emit(status('second'))).toBe(true);
    expect(await stream.emit(status('third'))).toBe(true);
    const { messages, ids } = await eventually(body, 3);
    // The log holds the second event twice (ordinals 2 and 3); the client gets it once, under the later id.
    expect(messages).toEqual([status('first'), status('second'), status('third')]);
    expect(ids.map((id) => id.slice(stream.streamId.length + 1).replace(/^\d+-/, ''))).toEqual(['1', '3', '4']);
  });
});
