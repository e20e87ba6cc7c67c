import {
  CallToolResultSchema,
  LoggingMessageNotificationSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  type Message,
  progressOf,
  RETRY_MS,
  related,
  responseTo,
  useDeliveryPods,
  waitFor,
} from './fixtures/delivery-pods.js';

// Streams resume on the other pod: progress, logs and status notifications once each, in order. Two gateway processes and one worker process behind a proxy
// without stickiness (fixtures/delivery-pods.ts).

const pods = useDeliveryPods('resume');
const { connect, rawSession, rawRequest, openSse } = pods;

describe('cross-pod resumption of delivery streams', () => {
  it('resumes a direct call killed mid-stream on the other pod: nothing lost, nothing repeated, logs at the session level', async () => {
    const sessionId = await rawSession();
    pods.proxy.route = ({ method, rpcMethod }) =>
      method === 'GET' ? 1 : rpcMethod === 'logging/setLevel' ? 1 : rpcMethod === 'tools/call' ? 0 : undefined;
    expect(await rawRequest(sessionId, 'logging/setLevel', { level: 'warning' })).toMatchObject({ result: {} });
    const call = {
      jsonrpc: '2.0',
      id: 'call-1',
      method: 'tools/call',
      params: { name: 'tick', arguments: { ticks: 30, ms: 30 }, _meta: { progressToken: 'p-1' } },
    };
    const first = await openSse(sessionId, call);
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    await first.until((messages) => progressOf(messages).length >= 6, 'six progress notifications');
    await first.kill();
    // Ticks go on while no connection carries the stream (within the cancel grace period).
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await openSse(sessionId, undefined, first.lastEventId());
    await second.until(responseTo('call-1'), 'the response');
    await second.ended;

    // The priming event: an id ("before the stream's first event", not logged), empty data, the retry hint.
    expect(first.events[0]).toEqual({ id: expect.stringMatching(/_0-0$/), data: '', retry: RETRY_MS });
    const messages = [...first.messages(), ...second.messages()] as Message[];
    expect(progressOf(messages)).toEqual(
      Array.from({ length: 30 }, (_v, i) => ({
        progressToken: 'p-1',
        progress: i + 1,
        total: 30,
        message: `tick ${i + 1}`,
      })),
    );
    const logs = messages.filter((m) => m.method === 'notifications/message').map((m) => m.params);
    expect(logs).toEqual(
      Array.from({ length: 15 }, (_v, i) => ({ level: 'warning', logger: 'tick', data: { tick: 2 * i + 1 } })),
    );
    expect(messages.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 'call-1',
      result: { content: [{ type: 'text', text: 'ticked 30' }] },
    });
    const ids = [...first.events, ...second.events].map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    const targets = pods.proxy.log.filter((entry) => entry.rpcMethod === 'tools/call' || entry.method === 'GET');
    expect(targets.slice(-2).map((entry) => entry.target)).toEqual([0, 1]);
  });

  it('[PRG-1][RES-5][META-1] resumes a tasks/result stream on the other pod: every progress once, in order, with the original token', async () => {
    const sessionId = await rawSession();
    pods.proxy.route = ({ method, rpcMethod }) =>
      method === 'GET' ? 0 : rpcMethod === 'tasks/result' ? 1 : rpcMethod === 'tools/call' ? 0 : undefined;
    const created = await rawRequest(sessionId, 'tools/call', {
      name: 'tick',
      arguments: { ticks: 30, ms: 30 },
      task: {},
      _meta: { progressToken: 'p-2' },
    });
    const taskId = (created.result as { task: { taskId: string } }).task.taskId;
    const request = { jsonrpc: '2.0', id: 7, method: 'tasks/result', params: { taskId } };
    const first = await openSse(sessionId, request);
    await first.until((messages) => progressOf(messages).length >= 5, 'five progress notifications');
    await first.kill();
    // The task runs on without a stream (RES-5).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await rawRequest(sessionId, 'tasks/get', { taskId })).toMatchObject({ result: { status: 'working' } });
    const second = await openSse(sessionId, undefined, first.lastEventId());
    await second.until(responseTo(7), 'the response');

    const messages = [...first.messages(), ...second.messages()] as Message[];
    expect(progressOf(messages)).toEqual(
      Array.from({ length: 30 }, (_v, i) => ({
        progressToken: 'p-2',
        progress: i + 1,
        total: 30,
        message: `tick ${i + 1}`,
        _meta: related(taskId),
      })),
    );
    const logs = messages.filter((m) => m.method === 'notifications/message');
    expect(logs).toHaveLength(30);
    for (const log of logs) expect(log.params?._meta).toEqual(related(taskId));
    expect(messages.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { content: [{ type: 'text', text: 'ticked 30' }], _meta: related(taskId) },
    });
  });

  it('[NTF-1] resumes the GET stream on the other pod with every status notification of the feed once, in order', async () => {
    const sessionId = await rawSession();
    pods.proxy.route = ({ method, rpcMethod }) => (method === 'GET' ? 0 : rpcMethod === 'tools/call' ? 1 : undefined);
    const feedKey = pods.keys.sessionFeed(sessionId);
    const get = await openSse(sessionId);
    await waitFor(() => get.events.length > 0, 'the priming event');
    const run = async (ticks: number): Promise<string> => {
      const created = await rawRequest(sessionId, 'tools/call', { name: 'tick', arguments: { ticks }, task: {} });
      return (created.result as { task: { taskId: string } }).task.taskId;
    };
    const statuses = (messages: Message[]) => messages.filter((m) => m.method === 'notifications/tasks/status');
    const early = [await run(1), await run(2)];
    await get.until((messages) => statuses(messages).length >= 2, 'two status notifications');
    await get.kill();
    const late = [await run(1), await run(3)];
    pods.proxy.route = ({ method }) => (method === 'GET' ? 1 : undefined);
    const resumed = await openSse(sessionId, undefined, get.lastEventId());
    const all = [...early, ...late];
    await waitFor(async () => {
      const done = await Promise.all(
        all.map(async (id) => (await pods.redis.hget(pods.keys.task(id), 'status')) === 'completed'),
      );
      return done.every(Boolean);
    }, 'every task to complete');
    const expected = (await pods.redis.xrange(feedKey, '-', '+'))
      .filter(([, fields]) => fields[0] === 's')
      .map(([, fields]) => JSON.parse(fields[1] as string) as { taskId: string; status: string; version: string });
    await resumed.until((messages) => statuses([...get.messages(), ...messages]).length >= expected.length, 'all');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const received = statuses([...get.messages(), ...resumed.messages()]).map(
      (m) => m.params as Record<string, unknown>,
    );
    expect(received.map((params) => [params.taskId, params.status, params.lastUpdatedAt])).toEqual(
      expected.map((snapshot) => [
        snapshot.taskId,
        snapshot.status,
        new Date(Number((snapshot as unknown as { lastUpdatedAt: string }).lastUpdatedAt)).toISOString(),
      ]),
    );
    expect(new Set(received.map((params) => params.taskId))).toEqual(new Set(all));
    for (const id of all) expect(received.filter((p) => p.taskId === id).at(-1)?.status).toBe('completed');
  });

  it('[NTF-1][PRG-1] delivers status, progress and session-level logs of a task to the GET stream on either pod', async () => {
    for (const pod of [0, 1]) {
      pods.proxy.route = ({ method, rpcMethod }) =>
        method === 'GET' ? pod : rpcMethod === 'tools/call' || rpcMethod === 'logging/setLevel' ? 1 - pod : undefined;
      const { client, sessionId } = await connect();
      const statuses: string[] = [];
      const logs: unknown[] = [];
      client.setNotificationHandler(TaskStatusNotificationSchema, ({ params }) => {
        statuses.push(params.status);
      });
      client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
        logs.push(params.data);
      });
      await client.setLoggingLevel('warning');
      await waitFor(async () => (await pods.redis.exists(pods.keys.sessionStream(sessionId))) === 1, 'the GET stream');
      const progress: unknown[] = [];
      let result: unknown;
      for await (const message of client.experimental.tasks.callToolStream(
        { name: 'tick', arguments: { ticks: 6, ms: 20 } },
        CallToolResultSchema,
        { task: {}, onprogress: (update) => progress.push(update.progress) },
      )) {
        if (message.type === 'result') result = message.result;
        if (message.type === 'error') throw message.error;
      }
      await waitFor(() => statuses.at(-1) === 'completed' && logs.length === 3, 'the last notifications');
      expect((result as { content: unknown }).content).toEqual([{ type: 'text', text: 'ticked 6' }]);
      expect(progress).toEqual([1, 2, 3, 4, 5, 6]);
      expect(logs).toEqual([{ tick: 1 }, { tick: 3 }, { tick: 5 }]);
      // Its one status change (creation is not notified: the creator has the task in its answer).
      expect(statuses).toEqual(['completed']);
      expect(pods.proxy.log.filter((entry) => entry.method === 'GET').at(-1)?.target).toBe(pod);
      await client.close();
    }
  });
});
