import { type InputAnswer, InputWaitError } from '@taskgate/core';
import { describe, expect, it } from 'vitest';
import { type ClientTaskPeer, runClientTask } from '../src/client-tasks.js';

const CLIENT_TASK = {
  taskId: 'client-task-1',
  status: 'working',
  ttl: 60_000,
  createdAt: '2026-12-06T10:00:00.000Z',
  lastUpdatedAt: '2026-12-06T10:00:00.000Z',
};

/**
 * A peer whose first answer (the client's CreateTaskResult) comes only after the tool gave up: the wait the
 * tool can abort rejects at once, the one that waits regardless gets `late`. Records what is posted.
 */
function lateCreation(late: InputAnswer, cancellable = true) {
  const controller = new AbortController();
  const posted: { method: string; params: Record<string, unknown> }[] = [];
  let answered: () => void = () => {};
  const settled = new Promise<void>((resolve) => {
    answered = resolve;
  });
  const peer: ClientTaskPeer = {
    ask: async () => 'request-1',
    answer: async (requestId, _timeoutMs, abortable) => {
      expect(requestId).toBe('request-1');
      if (abortable) {
        controller.abort();
        throw new InputWaitError('aborted');
      }
      setImmediate(answered);
      return late;
    },
    post: async (method, params) => {
      posted.push({ method, params });
    },
    keep: async () => {},
    show: async () => {},
    signal: controller.signal,
    cancellable,
    minPollMs: 10,
    timeoutMs: 5000,
  };
  return { peer, posted, settled };
}

describe('a client task whose creation the tool gave up (CLT-1)', () => {
  it("cancels the task the client's late CreateTaskResult names", async () => {
    const { peer, posted, settled } = lateCreation({ result: { task: CLIENT_TASK } });
    await expect(runClientTask(peer, 'elicitation/create', { message: 'Go?' })).rejects.toMatchObject({
      reason: 'aborted',
    });
    await settled;
    await new Promise((resolve) => setImmediate(resolve));
    expect(posted).toEqual([{ method: 'tasks/cancel', params: { taskId: 'client-task-1' } }]);
  });

  it('cancels nothing when the late answer is an error, names a finished task, or the client cannot cancel', async () => {
    const cases = [
      lateCreation({ error: { code: -32603, message: 'no' } }),
      lateCreation({ result: { task: { ...CLIENT_TASK, status: 'completed' } } }),
      lateCreation({ result: { task: CLIENT_TASK } }, false),
    ];
    for (const { peer, posted } of cases) {
      await expect(runClientTask(peer, 'sampling/createMessage', {})).rejects.toBeInstanceOf(InputWaitError);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(posted).toEqual([]);
    }
  });
});
