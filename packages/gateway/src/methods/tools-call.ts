import {
  type CatalogEntry,
  type DirectCalls,
  type StoredTask,
  type TaskStore,
  type ToolCatalog,
  visibleTo,
} from '@taskgate/core';
import { ErrorCode, type ProgressToken, ProtocolError, TASKS_EXTENSION } from '@taskgate/protocol';
import type { ArgumentValidator } from './argument-validator.js';
import type { Call, HandlerAnswer } from './context.js';
import { type EnqueueServices, enqueue } from './enqueue.js';
import { type InlineAnswerServices, inlineAnswer, inlineWaitOf } from './inline-answer.js';

/** What `tools/call` uses. */
export interface ToolsCallServices extends EnqueueServices, InlineAnswerServices {
  readonly catalog: ToolCatalog;
  readonly tasks: TaskStore;
  readonly calls: DirectCalls;
  readonly validator: ArgumentValidator;
  readonly options: { readonly directCallTtlMs: number; readonly inlineWaitMs: number };
}

/**
 * How the request asks for a task: `param`, the `task` param of 2025-11-25 (with its ttl); `none`, a
 * 2025-11-25 call without it; `extension`, a 2026-07-28 request that declares the tasks extension (the
 * tool's `taskSupport` decides); `no-extension`, one that does not.
 */
export type TaskAsk =
  | { readonly kind: 'param'; readonly ttl?: number }
  | { readonly kind: 'none' }
  | { readonly kind: 'extension' }
  | { readonly kind: 'no-extension' };

/** `tools/call` in the neutral form its codec decodes. */
export interface ToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  readonly progressToken?: ProgressToken;
  readonly task: TaskAsk;
  /** A later round of a call that asked for input: the record it goes on with (from the `requestState`). */
  readonly resume?: string;
  /** The revision's check of the arguments against the request's envelope (2026-07-28 `Mcp-Param-*`). */
  readonly checkEnvelope?: (inputSchema: Record<string, unknown>, args: Record<string, unknown>) => void;
  /** Aborted when the client goes away (ends an inline wait, see `inline-answer.ts`). */
  readonly signal?: AbortSignal;
}

/**
 * `tools/call`: checks the tool and its `taskSupport` (TOOL-3, TOOL-5) and the arguments (ajv) before anything
 * is created or enqueued; then creates a task (CRT-4: `working`) and answers at once (CRT-2, CRT-3) or, on
 * 2026-07-28, once it ended within the tool's inline wait with its result (`inline-answer.ts`); or runs
 * the call through the same pipeline as a hidden record (kind `direct`: not listed, not visible to the tasks
 * methods) whose answer the revision carries.
 */
export async function toolsCall(ctx: Call<ToolsCallServices>, params: ToolCall): Promise<HandlerAnswer> {
  const { services } = ctx;
  const entry = await services.catalog.get(params.name);
  // A tool hidden from the caller (`allow`) is refused exactly as an unknown one: its existence is not told.
  if (entry === undefined || !visibleTo(entry, ctx.principal)) {
    throw ProtocolError.invalidParams(`Unknown tool: '${params.name}'. Call tools/list to see the available tools.`);
  }
  if (params.resume !== undefined) {
    const task = await services.tasks.read(params.resume);
    if (task === undefined)
      throw ProtocolError.invalidParams('Invalid params: the request this state belongs to has expired');
    return { kind: 'call', task };
  }
  const args = params.arguments;
  params.checkEnvelope?.(entry.tool.inputSchema as Record<string, unknown>, args);
  const asTask = taskMode(params.name, entry, params.task);
  const check = services.validator.check(entry.tool, args);
  if (!check.ok) {
    if (asTask) throw ProtocolError.invalidParams(check.message);
    // Input validation errors of a plain call are tool execution errors, which the model can see.
    return { kind: 'result', result: { content: [{ type: 'text', text: check.message }], isError: true } };
  }
  const record = await createRecord(ctx, entry, params, asTask);
  const failed = await enqueue(ctx, entry, record, args).catch(async (error: unknown) => {
    // Not acknowledged (see `enqueue`): a direct call's index entry goes with its record.
    if (!asTask && ctx.sessionId !== undefined) await services.calls.close(ctx.sessionId, ctx.request.id);
    throw error;
  });
  // A task is handed back at once, unless its tool gathers its first input before it becomes one.
  if (asTask && (failed !== undefined || entry.inputBeforeTask !== true || !ctx.inlineInput)) {
    // 2026-07-28: a task that ends within the tool's inline wait answers as a plain call.
    const waitMs = failed === undefined ? inlineWaitOf(services, entry, params.task) : 0;
    const waited = waitMs > 0 ? await inlineAnswer(ctx, record, waitMs, params.signal) : undefined;
    if (waited?.kind === 'result') return waited;
    // CRT-5: what the tool's author wants the model to hear while the task runs.
    const immediate = entry.immediateResponse === undefined ? {} : { immediateResponse: entry.immediateResponse };
    return { kind: 'task', task: failed ?? (waited?.kind === 'task' ? waited.task : record), ...immediate };
  }
  if (failed !== undefined) {
    if (ctx.sessionId !== undefined) await services.calls.close(ctx.sessionId, ctx.request.id);
    throw ProtocolError.internal('The call could not be queued for a worker; try again later.');
  }
  return { kind: 'call', task: record };
}

/** True when the call runs as a task; the refusals of `taskSupport` otherwise. */
function taskMode(name: string, entry: CatalogEntry, ask: TaskAsk): boolean {
  const taskSupport = entry.tool.execution?.taskSupport ?? 'forbidden';
  if (ask.kind === 'param' && taskSupport === 'forbidden') {
    throw ProtocolError.methodNotFound(
      `Tool '${name}' does not support task-augmented calls (taskSupport is 'forbidden'); call it without 'task'`,
    );
  }
  const asTask = ask.kind === 'param' || (ask.kind === 'extension' && taskSupport !== 'forbidden');
  if (asTask || taskSupport !== 'required') return asTask;
  if (ask.kind === 'none') {
    throw ProtocolError.methodNotFound(
      `Task augmentation required for tools/call requests: tool '${name}' has taskSupport 'required'; add 'task' to the params`,
    );
  }
  throw new ProtocolError(
    ErrorCode.MissingClientCapability,
    `Missing required client capability: tool '${name}' runs only as a task; declare the ${TASKS_EXTENSION} extension`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/**
 * The record of the task or call. A task of a session is on that session's feed; a record of revision
 * 2026-07-28 says so (with auth off, that revision finds its tasks by id). A direct call of a session is indexed
 * by the request's JSON-RPC id, so that `notifications/cancelled` on any gateway finds it.
 */
async function createRecord(
  ctx: Call<ToolsCallServices>,
  entry: CatalogEntry,
  params: ToolCall,
  asTask: boolean,
): Promise<StoredTask> {
  const { services } = ctx;
  const ttl = params.task.kind === 'param' ? params.task.ttl : undefined;
  const record = await services.tasks.create({
    owner: ctx.owner,
    kind: asTask ? 'task' : 'direct',
    tool: entry.tool.name,
    ...(asTask && ctx.sessionId !== undefined && { session: ctx.sessionId }),
    ...(ctx.stamp !== undefined && { wire: ctx.stamp }),
    ...(asTask ? ttl !== undefined && { requestedTtlMs: ttl } : { requestedTtlMs: services.options.directCallTtlMs }),
    ...(params.progressToken !== undefined && { progressToken: params.progressToken }),
  });
  if (!asTask && ctx.sessionId !== undefined) {
    await services.calls.open(ctx.sessionId, ctx.request.id, record.taskId, record.ttl);
  }
  ctx.logger.info(
    {
      audit: asTask ? 'task.created' : 'call.started',
      taskId: record.taskId,
      tool: entry.tool.name,
      owner: record.ownerId,
      principal: ctx.principal,
    },
    asTask ? 'task created' : 'call started',
  );
  return record;
}
