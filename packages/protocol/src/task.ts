import { z } from 'zod';

/** `_meta` key that ties a request, notification or response to a task (META-1). */
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/** `_meta` key a receiver may set on CreateTaskResult with text for the model (CRT-5). */
export const MODEL_IMMEDIATE_RESPONSE_META_KEY = 'io.modelcontextprotocol/model-immediate-response';

/** The five states of a task (LIF-1); `working` first (CRT-4). */
export const TaskStatusSchema = z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']);
/** A task status. */
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

const TASK_STATUSES: ReadonlySet<unknown> = new Set(TaskStatusSchema.options);

/** True for one of the five statuses: a Set look-up, for what reads a task's status from Redis per message. */
export function isTaskStatus(value: unknown): value is TaskStatus {
  return TASK_STATUSES.has(value);
}

/** Terminal statuses never change again (LIF-1). */
export const TERMINAL_STATUSES = ['completed', 'failed', 'cancelled'] as const satisfies readonly TaskStatus[];
/** A status a task never leaves. */
export type TerminalTaskStatus = (typeof TERMINAL_STATUSES)[number];

/** True for `completed`, `failed` and `cancelled`. */
export function isTerminalStatus(status: TaskStatus): status is TerminalTaskStatus {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** A task as every task response reports it (GET-1, GET-2, GET-3). */
export const TaskSchema = z.object({
  taskId: z.string(),
  status: TaskStatusSchema,
  /** Granted lifetime in ms from creation; `null` means unlimited. */
  ttl: z.union([z.number(), z.null()]),
  /** ISO 8601. */
  createdAt: z.string(),
  /** ISO 8601. */
  lastUpdatedAt: z.string(),
  pollInterval: z.number().optional(),
  statusMessage: z.string().optional(),
});
/** A task. */
export type Task = z.infer<typeof TaskSchema>;

/** `params.task` of a task-augmented request (CRT-1). */
export const TaskMetadataSchema = z.object({
  ttl: z.number().optional(),
});
/** The `task` param of a task-augmented request. */
export type TaskMetadata = z.infer<typeof TaskMetadataSchema>;

/** `_meta[RELATED_TASK_META_KEY]`: the task a message belongs to (META-1). */
export const RelatedTaskMetadataSchema = z.object({
  taskId: z.string(),
});
/** The related-task `_meta` value. */
export type RelatedTaskMetadata = z.infer<typeof RelatedTaskMetadataSchema>;
