import { describe, expect, it } from 'vitest';
import { type Message, useDeliveryPods, waitFor } from './fixtures/delivery-pods.js';

// On every stream that carries a task's server-to-client request, the task's `input_required` status comes
// first: a client that reacts to the status must see it before it answers. Two gateways behind a proxy.

const pods = useDeliveryPods('order');
const { rawSession, rawRequest, rawAnswer, openSse } = pods;

/** The position of the input_required status of `taskId` and of its first `method` request in `messages`. */
function positions(messages: Message[], taskId: string, method: string) {
  const status = messages.findIndex(
    (m) =>
      m.method === 'notifications/tasks/status' && m.params?.taskId === taskId && m.params?.status === 'input_required',
  );
  const request = messages.findIndex((m) => m.method === method);
  return { status, request };
}

const isTerminal = async (taskId: string) =>
  ['completed', 'failed'].includes((await pods.redis.hget(pods.keys.task(taskId), 'status')) ?? '');

describe('2025-11-25: the input_required status before the request it waits for', () => {
  it('on the session GET stream (elicitation/create), served by the other pod', async () => {
    pods.proxy.route = ({ method, rpcMethod }) => (method === 'GET' ? 1 : rpcMethod === 'tools/call' ? 0 : undefined);
    const sessionId = await rawSession({ elicitation: {} });
    const get = await openSse(sessionId);
    await waitFor(async () => (await pods.redis.exists(pods.keys.sessionStream(sessionId))) === 1, 'the GET stream');
    const created = await rawRequest(sessionId, 'tools/call', { name: 'ask', arguments: { questions: 1 }, task: {} });
    const taskId = (created.result as { task: { taskId: string } }).task.taskId;
    await get.until((messages) => messages.some((m) => m.method === 'elicitation/create'), 'the elicitation');
    await get.until((messages) => positions(messages, taskId, 'elicitation/create').status >= 0, 'the status');
    const { status, request } = positions(get.messages() as Message[], taskId, 'elicitation/create');
    expect(status).toBeLessThan(request);
    const sent = (get.messages() as Message[])[request];
    expect(await rawAnswer(sessionId, sent?.id, { action: 'accept', content: { name: 'Ada' } })).toBe(202);
    await waitFor(() => isTerminal(taskId), 'the end of the task');
  });

  it('on the tasks/result stream (elicitation/create and sampling/createMessage)', async () => {
    const sessionId = await rawSession({ elicitation: {}, sampling: {} });
    for (const [tool, args, method, answer] of [
      ['ask', { questions: 1, delayMs: 300 }, 'elicitation/create', { action: 'accept', content: { name: 'Ada' } }],
      [
        'muse',
        { topic: 'tides', delayMs: 300 },
        'sampling/createMessage',
        { model: 'm', role: 'assistant', content: { type: 'text', text: 'moon' } },
      ],
    ] as const) {
      const created = await rawRequest(sessionId, 'tools/call', { name: tool, arguments: args, task: {} });
      const taskId = (created.result as { task: { taskId: string } }).task.taskId;
      const stream = await openSse(sessionId, { jsonrpc: '2.0', id: 9, method: 'tasks/result', params: { taskId } });
      await stream.until((messages) => messages.some((m) => m.method === method), method);
      const messages = stream.messages() as Message[];
      const { status, request } = positions(messages, taskId, method);
      expect([method, status >= 0 && status < request]).toEqual([method, true]);
      expect(await rawAnswer(sessionId, messages[request]?.id, answer)).toBe(202);
      await stream.until((all) => all.some((m) => m.id === 9 && !('method' in m)), 'the result');
    }
  });
});
