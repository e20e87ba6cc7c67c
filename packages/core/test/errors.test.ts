import { ErrorCode, ProtocolError } from '@taskgate/protocol';
import { describe, expect, it } from 'vitest';
import { cannotCancelTerminal, invalidCursor, TaskRefusal, taskLimitExceeded } from '../src/errors.js';
import { InputWaitError, TaskgateError, taskExpired, taskNotFound } from '../src/index.js';

const tagged = (error: ProtocolError) => ({
  reason: error instanceof TaskRefusal ? error.reason : undefined,
  wire: error.toJSON(),
});

describe("core's errors", () => {
  it('tag each refusal with a stable string code that stays off the wire', () => {
    expect(tagged(taskNotFound())).toEqual({
      reason: 'TASK_NOT_FOUND',
      wire: { code: ErrorCode.InvalidParams, message: 'Failed to retrieve task: Task not found' },
    });
    expect(tagged(taskExpired()).reason).toBe('TASK_EXPIRED');
    expect(tagged(cannotCancelTerminal('completed')).reason).toBe('TASK_TERMINAL');
    expect(tagged(invalidCursor('not ours')).reason).toBe('INVALID_CURSOR');
    expect(tagged(taskLimitExceeded(3))).toMatchObject({
      reason: 'TASK_LIMIT_EXCEEDED',
      wire: { code: ErrorCode.TaskLimitExceeded, data: { limit: 3 } },
    });
    expect(taskNotFound()).toBeInstanceOf(ProtocolError);
  });

  it('give internal failures a string code', () => {
    expect(new TaskgateError('INVALID_CONFIG', 'bad').code).toBe('INVALID_CONFIG');
    expect(new InputWaitError('timeout').code).toBe('INPUT_WAIT_TIMEOUT');
    expect(new InputWaitError('aborted').code).toBe('INPUT_WAIT_ABORTED');
  });
});
