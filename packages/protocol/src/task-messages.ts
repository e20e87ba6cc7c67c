import { z } from 'zod';
import { BaseNotificationParamsSchema, BaseRequestParamsSchema, ResultSchema } from './message-base.js';
import { PaginatedRequestParamsSchema, PaginatedResultSchema } from './pagination.js';
import { TaskSchema } from './task.js';

// Requests, results and the notification of the Tasks utility. A `_meta` related-task entry in the
// tasks/get, tasks/result and tasks/cancel requests is accepted but not authoritative: `taskId` is (META-2).

/** The immediate answer to a task-augmented request: the new task, not the operation's result (CRT-2). */
export const CreateTaskResultSchema = ResultSchema.extend({
  task: TaskSchema,
});
/** The result of a task-augmented request. */
export type CreateTaskResult = z.infer<typeof CreateTaskResultSchema>;

/** Params naming one task: those of `tasks/get`, `tasks/result` and `tasks/cancel`. */
export const TaskIdRequestParamsSchema = BaseRequestParamsSchema.extend({
  taskId: z.string(),
});
/** Params naming one task. */
export type TaskIdRequestParams = z.infer<typeof TaskIdRequestParamsSchema>;

/**
 * Params of `tasks/update` (revision 2026-07-28, tasks extension): the task, and the answers to its input
 * requests by key (each checked against the request it answers).
 */
export const UpdateTaskRequestParamsSchema = TaskIdRequestParamsSchema.extend({
  inputResponses: z.unknown().optional(),
});
/** Params of `tasks/update`. */
export type UpdateTaskRequestParams = z.infer<typeof UpdateTaskRequestParamsSchema>;

/** `tasks/get`: poll a task's state (GET-1). */
export const GetTaskRequestSchema = z.object({
  method: z.literal('tasks/get'),
  params: TaskIdRequestParamsSchema,
});
/** A `tasks/get` request. */
export type GetTaskRequest = z.infer<typeof GetTaskRequestSchema>;

/** The result of `tasks/get`: the task's members at the top level. */
export const GetTaskResultSchema = ResultSchema.extend(TaskSchema.shape);
/** The result of `tasks/get`. */
export type GetTaskResult = z.infer<typeof GetTaskResultSchema>;

/** `tasks/result`: wait for a task to finish and fetch what its request returned (RES-1, RES-2). */
export const GetTaskPayloadRequestSchema = z.object({
  method: z.literal('tasks/result'),
  params: TaskIdRequestParamsSchema,
});
/** A `tasks/result` request. */
export type GetTaskPayloadRequest = z.infer<typeof GetTaskPayloadRequestSchema>;

/** The result of `tasks/result`: whatever the underlying request returned, e.g. a CallToolResult. */
export const GetTaskPayloadResultSchema = ResultSchema;
/** The result of `tasks/result`. */
export type GetTaskPayloadResult = z.infer<typeof GetTaskPayloadResultSchema>;

/** `tasks/list`: page through the caller's tasks (LST-1). */
export const ListTasksRequestSchema = z.object({
  method: z.literal('tasks/list'),
  params: PaginatedRequestParamsSchema.optional(),
});
/** A `tasks/list` request. */
export type ListTasksRequest = z.infer<typeof ListTasksRequestSchema>;

/** One page of tasks. */
export const ListTasksResultSchema = PaginatedResultSchema.extend({
  tasks: z.array(TaskSchema),
});
/** The result of `tasks/list`. */
export type ListTasksResult = z.infer<typeof ListTasksResultSchema>;

/** `tasks/cancel`: stop a task and mark it cancelled (CNL-2). */
export const CancelTaskRequestSchema = z.object({
  method: z.literal('tasks/cancel'),
  params: TaskIdRequestParamsSchema,
});
/** A `tasks/cancel` request. */
export type CancelTaskRequest = z.infer<typeof CancelTaskRequestSchema>;

/** The result of `tasks/cancel`: the task, now `cancelled`. */
export const CancelTaskResultSchema = ResultSchema.extend(TaskSchema.shape);
/** The result of `tasks/cancel`. */
export type CancelTaskResult = z.infer<typeof CancelTaskResultSchema>;

/** Params of `notifications/tasks/status`: the whole task (NTF-1). */
export const TaskStatusNotificationParamsSchema = BaseNotificationParamsSchema.extend(TaskSchema.shape);
/** Params of `notifications/tasks/status`. */
export type TaskStatusNotificationParams = z.infer<typeof TaskStatusNotificationParamsSchema>;

/** Optional news of a status change; requestors must keep polling regardless (NTF-2). */
export const TaskStatusNotificationSchema = z.object({
  method: z.literal('notifications/tasks/status'),
  params: TaskStatusNotificationParamsSchema,
});
/** A `notifications/tasks/status` notification. */
export type TaskStatusNotification = z.infer<typeof TaskStatusNotificationSchema>;
