import { type CatalogEntry, toTask } from '@taskgate/core';
import {
  type ClientRequestParams,
  MODEL_IMMEDIATE_RESPONSE_META_KEY,
  ProtocolError,
  type Task,
} from '@taskgate/protocol';
import type { Reply, RpcContext } from './context.js';
import { directCall } from './direct-call.js';
import { enqueue } from './enqueue.js';

type CallParams = ClientRequestParams<'tools/call'>;

/**
 * `tools/call`: checks the tool and its `taskSupport` (TOOL-3, TOOL-5) and the arguments (ajv) before anything
 * is created or enqueued; then either creates a task and answers `CreateTaskResult` at once (CRT-2, CRT-3), or
 * runs the call through the same pipeline as a hidden record and streams its result (direct call).
 */
export async function toolsCall(ctx: RpcContext, params: CallParams): Promise<Reply> {
  const entry = await ctx.services.catalog.get(params.name);
  if (entry === undefined) {
    throw ProtocolError.invalidParams(`Unknown tool: '${params.name}'. Call tools/list to see the available tools.`);
  }
  const taskSupport = entry.tool.execution?.taskSupport ?? 'forbidden';
  const args = params.arguments ?? {};
  if (params.task !== undefined) {
    if (taskSupport === 'forbidden') {
      throw ProtocolError.methodNotFound(
        `Tool '${params.name}' does not support task-augmented calls (taskSupport is 'forbidden'); call it without 'task'`,
      );
    }
    const check = ctx.services.validator.check(entry.tool, args);
    if (!check.ok) throw ProtocolError.invalidParams(check.message);
    const task = await createTask(ctx, entry, params, args);
    // CRT-5: what the tool's author wants the model to hear while the task runs.
    const meta =
      entry.immediateResponse === undefined
        ? undefined
        : { _meta: { [MODEL_IMMEDIATE_RESPONSE_META_KEY]: entry.immediateResponse } };
    return { kind: 'result', result: { task, ...meta } };
  }
  if (taskSupport === 'required') {
    throw ProtocolError.methodNotFound(
      `Task augmentation required for tools/call requests: tool '${params.name}' has taskSupport 'required'; add 'task' to the params`,
    );
  }
  const check = ctx.services.validator.check(entry.tool, args);
  // 2025-11-25: input validation errors of a plain call are tool execution errors, which the model can see.
  if (!check.ok) return { kind: 'result', result: { content: [{ type: 'text', text: check.message }], isError: true } };
  return directCall(ctx, entry, params, args);
}

/** Creates the task (CRT-4: `working`), enqueues its job, and returns the task as the client sees it. */
async function createTask(
  ctx: RpcContext,
  entry: CatalogEntry,
  params: CallParams,
  args: Record<string, unknown>,
): Promise<Task> {
  const progressToken = params._meta?.progressToken;
  const record = await ctx.services.tasks.create({
    owner: ctx.owner,
    kind: 'task',
    tool: entry.tool.name,
    session: ctx.session.sessionId,
    ...(params.task?.ttl !== undefined && { requestedTtlMs: params.task.ttl }),
    ...(progressToken !== undefined && { progressToken }),
  });
  ctx.logger.info(
    {
      audit: 'task.created',
      taskId: record.taskId,
      tool: entry.tool.name,
      owner: record.ownerId,
      principal: ctx.principal,
    },
    'task created',
  );
  const failed = await enqueue(ctx, entry, record, args);
  return toTask(failed ?? record);
}
