import { EventBus, type InputAnswer, InputRequests, type OutboxMessage, TaskOutbox } from '@taskgate/core';
import { RELATED_TASK_META_KEY } from '@taskgate/protocol';
import { useRedis } from '@taskgate/test-harness';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { recordTaskChannels } from './support/channel-recorder.js';
import { type TestGateway, until } from './support/gateway.js';
import { useWorkerProcesses } from './support/process-env.js';
import type { WorkerProcess } from './support/worker-process.js';

const INPUT_TIMEOUT_MS = 1500;
type Request = Extract<OutboxMessage, { type: 'request' }>;

describe('a forked worker process asking the client for input through Redis', () => {
  const redis = useRedis();
  const env = useWorkerProcesses(redis);
  let worker: WorkerProcess;
  const buses: EventBus[] = [];
  beforeAll(async () => {
    worker = await env.start({ INPUT_TIMEOUT_MS: String(INPUT_TIMEOUT_MS) });
  });
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((bus) => bus.close()));
  });

  /** The gateway's side: the task's outbox and the answers to its requests. */
  function client(gateway: TestGateway) {
    const bus = new EventBus(gateway.redis, gateway.keys);
    buses.push(bus);
    const outbox = new TaskOutbox({ redis: gateway.redis, keys: gateway.keys });
    const inputs = new InputRequests({ redis: gateway.redis, bus, keys: gateway.keys });
    return {
      /** Waits for the task's `count`-th request in its outbox. */
      async request(taskId: string, count = 1): Promise<Request[]> {
        return await until(
          async () => {
            const requests = (await outbox.read(taskId))
              .map((entry) => entry.message)
              .filter((message): message is Request => message.type === 'request');
            return requests.length >= count ? requests : undefined;
          },
          5000,
          `request ${count} of ${taskId}`,
        );
      },
      answer: (request: Request, answer: InputAnswer) => inputs.answer(request.requestId, gateway.ownerId(), answer),
      taskOf: (request: Request) => inputs.taskOf(request.requestId, gateway.ownerId()),
    };
  }

  it('[INP-1][INP-2][INP-4] round trip: input_required with the request in the outbox, answer, back to working', async () => {
    const gateway = env.gateway();
    const channels = await recordTaskChannels(redis, gateway.keys);
    const peer = client(gateway);
    const taskId = await gateway.call('asker', { kind: 'elicit' });
    const [request] = await peer.request(taskId);
    if (request === undefined) throw new Error('no request');
    expect(request.method).toBe('elicitation/create');
    expect(request.params).toEqual({
      message: 'Question 1?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });
    expect(request.together).toEqual({ id: expect.any(String), of: 1 });
    expect(await peer.taskOf(request)).toBe(taskId);
    await gateway.waitFor(taskId, (task) => task.status === 'input_required');
    expect(await peer.answer(request, { result: { action: 'accept', content: { name: 'Ada' } } })).toBe('ok');
    expect(await peer.answer(request, { result: { action: 'decline' } })).toBe('duplicate');
    expect((await gateway.waitForEnd(taskId)).status).toBe('completed');
    expect(await gateway.outcome(taskId)).toEqual({
      result: { content: [{ type: 'text', text: '[{"action":"accept","content":{"name":"Ada"}}]' }] },
    });
    expect(channels.statuses(taskId)).toEqual(['input_required', 'working', 'completed']);
  });

  it('[INP-4] returns a decline to the handler like any answer', async () => {
    const gateway = env.gateway();
    const peer = client(gateway);
    const taskId = await gateway.call('asker', { kind: 'elicit' });
    const [request] = await peer.request(taskId);
    await peer.answer(request as Request, { result: { action: 'decline' } });
    expect((await gateway.waitForEnd(taskId)).status).toBe('completed');
    expect(await gateway.outcome(taskId)).toEqual({
      result: { content: [{ type: 'text', text: '[{"action":"decline"}]' }] },
    });
  });

  it('[INP-4] stays input_required until the last of concurrent requests is answered', async () => {
    const gateway = env.gateway();
    const channels = await recordTaskChannels(redis, gateway.keys);
    const peer = client(gateway);
    const taskId = await gateway.call('asker', { kind: 'elicit', questions: 2 });
    const [first, second] = await peer.request(taskId, 2);
    // Asked in one turn (a Promise.all): both say so, with the same id, so a round can wait for both.
    expect(first?.together).toEqual({ id: expect.any(String), of: 2 });
    expect(second?.together).toEqual(first?.together);
    await gateway.waitFor(taskId, (task) => task.status === 'input_required');
    await peer.answer(first as Request, { result: { action: 'accept', content: { name: 'one' } } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await gateway.read(taskId))?.status).toBe('input_required');
    await peer.answer(second as Request, { result: { action: 'accept', content: { name: 'two' } } });
    expect((await gateway.waitForEnd(taskId)).status).toBe('completed');
    const answers = JSON.parse(
      ((await gateway.outcome(taskId)) as { result: { content: { text: string }[] } }).result.content[0]?.text ?? '',
    ) as { content: { name: string } }[];
    expect(answers.map((answer) => answer.content.name).sort()).toEqual(['one', 'two']);
    expect(channels.statuses(taskId)).toEqual(['input_required', 'working', 'completed']);
  });

  it('ends the wait after inputTimeoutMs and puts the task back to working', async () => {
    const gateway = env.gateway();
    const channels = await recordTaskChannels(redis, gateway.keys);
    const peer = client(gateway);
    const startedAt = Date.now();
    const taskId = await gateway.call('asker', { kind: 'elicit' });
    await peer.request(taskId);
    expect((await gateway.waitForEnd(taskId, 10_000)).status).toBe('completed');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(INPUT_TIMEOUT_MS);
    expect(await gateway.outcome(taskId)).toEqual({
      result: { content: [{ type: 'text', text: 'no answer: timeout' }] },
    });
    expect((await worker.next('input-ended', (event) => event.taskId === taskId)).error).toBe('InputWaitError');
    expect(channels.statuses(taskId)).toEqual(['input_required', 'working', 'completed']);
  });

  it("a question given up by its own signal rejects with the signal's reason; the task goes back to working", async () => {
    const gateway = env.gateway();
    const channels = await recordTaskChannels(redis, gateway.keys);
    const peer = client(gateway);
    const taskId = await gateway.call('asker', { kind: 'elicit', withdrawMs: 500 });
    await peer.request(taskId);
    expect((await gateway.waitForEnd(taskId, 10_000)).status).toBe('completed');
    expect(await gateway.outcome(taskId)).toEqual({
      result: { content: [{ type: 'text', text: 'withdrawn: TimeoutError' }] },
    });
    expect(channels.statuses(taskId)).toEqual(['input_required', 'working', 'completed']);
  });

  it('[CNL-2] a cancel ends the wait for an answer with the abort reason', async () => {
    const gateway = env.gateway();
    const peer = client(gateway);
    const taskId = await gateway.call('asker', { kind: 'elicit' });
    const [request] = await peer.request(taskId);
    await gateway.waitFor(taskId, (task) => task.status === 'input_required');
    await gateway.store.cancel('alice', taskId);
    expect((await worker.next('input-ended', (event) => event.taskId === taskId)).error).toBe('AbortError');
    // A late answer is recorded but changes nothing.
    await peer.answer(request as Request, { result: { action: 'accept', content: { name: 'late' } } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await gateway.read(taskId)).toMatchObject({ status: 'cancelled' });
    expect(await gateway.outcome(taskId)).toBeUndefined();
  });

  it('[ERR-5] a JSON-RPC error answer to sampling becomes the task’s JSON-RPC error', async () => {
    const gateway = env.gateway();
    const peer = client(gateway);
    const taskId = await gateway.call('asker', { kind: 'sample' });
    const [request] = await peer.request(taskId);
    expect(request?.method).toBe('sampling/createMessage');
    expect(request?.params).toMatchObject({ maxTokens: 10, _meta: { [RELATED_TASK_META_KEY]: { taskId } } });
    await peer.answer(request as Request, { error: { code: -1, message: 'User rejected sampling request' } });
    const task = await gateway.waitForEnd(taskId);
    expect(task).toMatchObject({ status: 'failed', statusMessage: 'User rejected sampling request' });
    expect(await gateway.outcome(taskId)).toEqual({ error: { code: -1, message: 'User rejected sampling request' } });
  });

  it('returns a sampling result to the handler', async () => {
    const gateway = env.gateway();
    const peer = client(gateway);
    const taskId = await gateway.call('asker', { kind: 'sample' });
    const [request] = await peer.request(taskId);
    const reply = {
      model: 'test-model',
      role: 'assistant',
      content: { type: 'text', text: 'Hello!' },
      stopReason: 'endTurn',
    };
    await peer.answer(request as Request, { result: reply });
    expect((await gateway.waitForEnd(taskId)).status).toBe('completed');
    const outcome = (await gateway.outcome(taskId)) as { result: { content: { type: string; text: string }[] } };
    expect(outcome.result.content).toHaveLength(1);
    expect(JSON.parse(outcome.result.content[0]?.text ?? '')).toEqual([reply]);
  });
});
