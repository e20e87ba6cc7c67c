import { postHeaders, rawCall, rawInitialize, sleepMs } from '@taskgate/test-harness';
import { afterEach, describe, expect, it } from 'vitest';

import { RawSse } from '../gateway/fixtures/raw-sse.js';
import { type Pods, startPods } from './outage-pods.js';

// A tasks/result stream that is open when Redis goes away: the gateway's commands for it time out, and the
// stream must end without a response (the client resumes it with Last-Event-ID) rather than answer -32603,
// which would end the client's wait for a task that is still running. Once Redis is back, the resumed stream
// carries the task's progress it missed and its result, each exactly once.

const COMMAND_TIMEOUT_MS = 1000;

describe('a tasks/result stream across a Redis outage', () => {
  let pods: Pods | undefined;
  afterEach(async () => {
    if (pods === undefined) return;
    await Promise.all([pods.gateway.stop('SIGKILL'), pods.worker.stop('SIGKILL')]);
    await pods.redis.stop();
    pods = undefined;
  });

  it('[RES-2] a stream cut during the outage gets no error; resumed after it, every progress arrives once, then the result', async () => {
    pods = await startPods(COMMAND_TIMEOUT_MS);
    const { redis, url } = pods;
    const sessionId = await rawInitialize(url);
    const created = await rawCall(url, sessionId, 'tools/call', {
      name: 'report',
      arguments: { pages: 6, msPerPage: 1000 },
      task: {},
      _meta: { progressToken: 'p-outage' },
    });
    const taskId = (created.json() as { result: { task: { taskId: string } } }).result.task.taskId;

    const first = await RawSse.open(url, {
      method: 'POST',
      headers: postHeaders(sessionId),
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/result', params: { taskId } }),
    });
    await first.until((messages) => messages.some((m) => m.method === 'notifications/progress'), 'a progress event');
    await redis.kill();
    await sleepMs(2 * COMMAND_TIMEOUT_MS);
    // The client's connection drops too, and it resumes while Redis is still down: refused with 503, or a
    // stream that ends without a response; never a -32603 that would end the client's wait.
    await first.kill();
    expect(first.messages().filter((m) => m.id === 7)).toEqual([]);
    const lastEventId = first.lastEventId();
    expect(lastEventId).toBeDefined();
    const resume = () =>
      RawSse.open(url, {
        method: 'GET',
        headers: { ...postHeaders(sessionId), 'Last-Event-ID': lastEventId as string },
      });
    const during = await resume();
    if (during.status === 200) {
      await Promise.race([
        during.ended,
        sleepMs(15_000).then(() => {
          throw new Error('the resumed stream stayed open while Redis was down');
        }),
      ]);
      expect(during.messages().filter((m) => m.id === 7)).toEqual([]);
    } else {
      expect(during.status).toBe(503);
      await during.kill();
    }

    await redis.restart();
    let resumed: RawSse | undefined;
    for (const deadline = Date.now() + 20_000; resumed === undefined; await sleepMs(500)) {
      const attempt = await resume();
      if (attempt.status === 200) resumed = attempt;
      else await attempt.kill();
      if (resumed === undefined && Date.now() > deadline) throw new Error(`resume answered ${attempt.status}`);
    }
    await resumed.until((messages) => messages.some((m) => m.id === 7), 'the result', 60_000);
    const responses = resumed.messages().filter((m) => m.id === 7);
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({ jsonrpc: '2.0', id: 7, result: { structuredContent: { pages: 6 } } });
    // Every progress of the six steps arrived once, across both connections.
    const progress = [...first.messages(), ...during.messages(), ...resumed.messages()]
      .filter((m) => m.method === 'notifications/progress')
      .map((m) => (m.params as { progress: number }).progress);
    expect(progress).toEqual([...new Set(progress)].sort((a, b) => a - b));
    expect(new Set(progress).size).toBe(6);
    await resumed.kill();
  }, 150_000);
});
