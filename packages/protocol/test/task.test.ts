import { describe, expect, it } from 'vitest';
import {
  CreateTaskResultSchema,
  GetTaskResultSchema,
  isTaskStatus,
  isTerminalStatus,
  MODEL_IMMEDIATE_RESPONSE_META_KEY,
  RELATED_TASK_META_KEY,
  TaskSchema,
  type TaskStatus,
  TaskStatusSchema,
  TERMINAL_STATUSES,
} from '../src/index.js';

const task = {
  taskId: '786512e2-9e0d-44bd-8f29-789f320fe840',
  status: 'working',
  ttl: 60000,
  createdAt: '2025-11-25T10:30:00Z',
  lastUpdatedAt: '2025-11-25T10:40:00Z',
};

describe('task statuses', () => {
  it('[LIF-1] completed, failed and cancelled are terminal; working and input_required are not', () => {
    const verdicts = Object.fromEntries(TaskStatusSchema.options.map((status) => [status, isTerminalStatus(status)]));
    expect(verdicts).toEqual({
      working: false,
      input_required: false,
      completed: true,
      failed: true,
      cancelled: true,
    });
  });

  it('[LIF-1] isTaskStatus accepts what TaskStatusSchema accepts, and nothing else', () => {
    const values: unknown[] = [
      ...TaskStatusSchema.options,
      'Working',
      'done',
      '',
      'toString',
      '__proto__',
      1,
      null,
      {},
    ];
    for (const value of values)
      expect(isTaskStatus(value), String(value)).toBe(TaskStatusSchema.safeParse(value).success);
    expect(TaskStatusSchema.options.every(isTaskStatus)).toBe(true);
  });

  it('[LIF-1] TERMINAL_STATUSES lists exactly the statuses isTerminalStatus accepts', () => {
    const terminal: TaskStatus[] = TaskStatusSchema.options.filter(isTerminalStatus);
    expect(terminal).toEqual([...TERMINAL_STATUSES]);
  });

  it('knows the five statuses of the spec and no others', () => {
    expect(TaskStatusSchema.options).toEqual(['working', 'input_required', 'completed', 'failed', 'cancelled']);
    expect(TaskStatusSchema.safeParse('running').success).toBe(false);
  });
});

describe('TaskSchema', () => {
  it('[GET-2] requires createdAt and lastUpdatedAt', () => {
    const { createdAt: _c, ...noCreated } = task;
    const { lastUpdatedAt: _u, ...noUpdated } = task;
    expect(TaskSchema.safeParse(noCreated).success).toBe(false);
    expect(TaskSchema.safeParse(noUpdated).success).toBe(false);
    expect(TaskSchema.parse(task)).toEqual(task);
  });

  it('[GET-3] requires ttl, as milliseconds or null for unlimited', () => {
    const { ttl: _t, ...noTtl } = task;
    expect(TaskSchema.safeParse(noTtl).success).toBe(false);
    expect(TaskSchema.parse({ ...task, ttl: null }).ttl).toBeNull();
    expect(GetTaskResultSchema.parse({ ...task, ttl: 30000, pollInterval: 5000 }).pollInterval).toBe(5000);
  });

  it('[CRT-6] requires a string task id', () => {
    expect(TaskSchema.safeParse({ ...task, taskId: 1 }).success).toBe(false);
  });

  it('[CRT-2][CRT-5] CreateTaskResult wraps the task and may carry the model-immediate-response _meta', () => {
    const parsed = CreateTaskResultSchema.parse({
      task,
      _meta: { [MODEL_IMMEDIATE_RESPONSE_META_KEY]: 'Started; I will report back.' },
    });
    expect(parsed.task.status).toBe('working');
    expect(parsed._meta?.[MODEL_IMMEDIATE_RESPONSE_META_KEY]).toBe('Started; I will report back.');
    expect(CreateTaskResultSchema.safeParse(task).success).toBe(false);
  });

  it('uses the spec meta keys', () => {
    expect(RELATED_TASK_META_KEY).toBe('io.modelcontextprotocol/related-task');
    expect(MODEL_IMMEDIATE_RESPONSE_META_KEY).toBe('io.modelcontextprotocol/model-immediate-response');
  });
});
