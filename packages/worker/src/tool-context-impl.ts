import {
  type AskedTogether,
  errorMessage,
  type InputAnswer,
  type InputRequests,
  InputWaitError,
  inSpan,
  type Logger,
  type OutboxRequestMethod,
  type Span,
  SpanKind,
  type TaskOutbox,
  type TaskRef,
  type TaskStore,
  type ToolJobData,
  taskRefOf,
} from '@taskgate/core';
import {
  ClientCapabilitiesSchema,
  type CreateMessageRequestParams,
  CreateMessageRequestParamsSchema,
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  type ElicitRequestParams,
  ElicitRequestParamsSchema,
  ElicitResultSchema,
  ImplementationSchema,
  ListRootsResultSchema,
  LoggingLevelSchema,
  ProtocolError,
  RELATED_TASK_META_KEY,
} from '@taskgate/protocol';
import type { z } from 'zod';
import {
  type ClientTaskPeer,
  type ClientTasksSetting,
  declaresClientTasks,
  runClientTask,
  usesClientTask,
} from './client-tasks.js';
import { WORKER_DEFAULTS } from './defaults.js';
import { ClientCapabilityError } from './errors.js';
import type { InputOptions, ToolClient, ToolContext } from './tool-context.js';
import { describeZodIssues } from './zod-issues.js';

/** How long an input request outlives the wait for it, so a late answer still finds it (and is ignored). */
const REQUEST_LINGER_MS = 60_000;
/** How long a `tasks/cancel` sent to a client task is kept for its (unread) answer. */
const CANCEL_LIFETIME_MS = 60_000;

/** What a tool context needs from the worker. */
export interface ContextServices {
  readonly store: TaskStore;
  readonly outbox: TaskOutbox;
  readonly inputs: InputRequests;
  /** How long `elicit` / `sample` wait for the answer (ms). */
  readonly inputTimeoutMs: number;
  /** Whether `asTask: 'auto'` uses client tasks where the client declared them (default `auto`). */
  readonly clientTasks?: ClientTasksSetting;
  /** The shortest pause between two `tasks/get` of a client task (ms). */
  readonly clientTaskMinPollMs?: number;
  /** Announces `notifications/resources/updated` for a URI. */
  readonly announce: (uri: string) => Promise<void>;
  /** Announces that the list of tools, resources or prompts changed. */
  readonly announceListChanged?: (kind: 'tools' | 'resources' | 'prompts') => Promise<void>;
}

export interface ContextOptions {
  readonly services: ContextServices;
  readonly data: ToolJobData;
  readonly signal: AbortSignal;
  readonly attempt: number;
  readonly logger: Logger;
}

/** A tool context plus what the runner needs to finish cleanly. */
export interface ContextHandle {
  readonly context: ToolContext;
  /** Resolves once every progress, log and status change issued so far is in Redis. Never rejects. */
  flush(): Promise<void>;
}

export function clientOf(data: Pick<ToolJobData, 'client'>): ToolClient {
  const capabilities = ClientCapabilitiesSchema.safeParse(data.client?.capabilities ?? {});
  const info = ImplementationSchema.safeParse(data.client?.info);
  return { capabilities: capabilities.success ? capabilities.data : {}, ...(info.success && { info: info.data }) };
}

/**
 * Builds the `ctx` of one execution. Every Redis side effect (outbox appends, status changes) runs through
 * one queue, so the client sees them in call order even when the handler does not await them; the state
 * moves to `input_required` with the first pending input request and back to `working` after the last answer.
 */
export function createToolContext(options: ContextOptions): ContextHandle {
  const { services, data, signal, logger } = options;
  const { store, outbox, inputs } = services;
  const ref: TaskRef = taskRefOf(data);
  const taskId = data.taskId;
  const client = clientOf(data);
  // Only a job that carries the client's session data can be checked against its capabilities.
  const knowsClient = data.client !== undefined;
  let queue: Promise<unknown> = Promise.resolve();
  let pendingInputs = 0;
  /** The input requests asked in the current event-loop turn, and how many turns asked any before. */
  let turn: { id: string; of: number } | undefined;
  let turns = 0;
  /** Counts a request among those of this turn (a `Promise.all` of questions asks them all in one turn). */
  const askedInThisTurn = (): AskedTogether => {
    if (turn === undefined) {
      const opened = { id: String(++turns), of: 0 };
      turn = opened;
      setImmediate(() => {
        if (turn === opened) turn = undefined;
      });
    }
    turn.of += 1;
    // Read when the request is posted, after the turn ended: by then it counts every request of the turn.
    return turn;
  };

  /** Runs `step` after every step queued before it; the returned promise carries the step's own outcome. */
  const inOrder = <T>(step: () => Promise<T>): Promise<T> => {
    const run = queue.then(step);
    queue = run.catch(() => {});
    return run;
  };
  /** Like inOrder, for fire-and-forget steps: failures are logged, never thrown. */
  const quietly = (what: string, step: () => Promise<unknown>): Promise<void> =>
    inOrder(step).then(
      () => {},
      (error: unknown) => logger.warn({ err: errorMessage(error) }, `could not ${what}`),
    );

  /**
   * One server-to-client request, in a span (kind CLIENT, as the MCP conventions have it for requests the
   * server sends) from the request's creation to the client's answer: a child of the tool's execution span.
   */
  const ask = <S extends z.ZodType>(
    method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list',
    params: Record<string, unknown>,
    resultSchema: S,
    options: InputOptions | undefined,
  ): Promise<z.output<S>> => {
    const attributes = { 'mcp.method.name': method, 'mcp.method': method, 'mcp.task.id': taskId };
    return inSpan(method, { kind: SpanKind.CLIENT, attributes }, (span) =>
      roundTrip(method, params, resultSchema, options, span),
    );
  };

  const roundTrip = async <S extends z.ZodType>(
    method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list',
    params: Record<string, unknown>,
    resultSchema: S,
    options: InputOptions | undefined,
    span: Span,
  ): Promise<z.output<S>> => {
    // The request's own signal (a bridge whose upstream withdrew its question) ends only this wait.
    const waitSignal = options?.signal === undefined ? signal : AbortSignal.any([signal, options.signal]);
    waitSignal.throwIfAborted();
    const asTask = method !== 'roots/list' && clientTaskFor(method, options);
    const together = asTask ? undefined : askedInThisTurn();
    try {
      const answer = await holdingInput(async () => {
        if (asTask) return await runClientTask(clientTaskPeer(waitSignal), method, params);
        const how = { key: options?.key, ...(together !== undefined && { together }) };
        const sent = await send(method, params, services.inputTimeoutMs, how, waitSignal);
        span.setAttribute('jsonrpc.request.id', sent.requestId);
        return sent.answer;
      });
      if ('error' in answer) span.setAttribute('rpc.response.status_code', String(answer.error.code));
      if ('error' in answer) throw new ProtocolError(answer.error.code, answer.error.message, answer.error.data);
      const result = resultSchema.safeParse(answer.result);
      if (!result.success)
        throw new Error(`The client's answer to ${method} is not valid: ${describeZodIssues(result.error)}`);
      return result.data;
    } catch (error) {
      if (error instanceof InputWaitError && error.reason === 'aborted') throw waitSignal.reason;
      throw error;
    }
  };

  /**
   * Runs `work` while the task waits for input: `input_required` from the first pending request on (before
   * the request goes out, so every stream shows the status first), `working` again after the last answer.
   */
  const holdingInput = async <T>(work: () => Promise<T>): Promise<T> => {
    pendingInputs += 1;
    try {
      if (pendingInputs === 1) await inOrder(() => store.requireInput(ref));
      return await work();
    } finally {
      pendingInputs -= 1;
      if (pendingInputs === 0 && !signal.aborted) await quietly('resume the task', () => store.resume(ref));
    }
  };

  /** One server-to-client request through the task's outbox, and the client's answer. */
  const send = async (
    method: OutboxRequestMethod,
    params: Record<string, unknown>,
    timeoutMs: number,
    how: { readonly key?: string | undefined; readonly together?: AskedTogether },
    waitSignal: AbortSignal,
  ): Promise<{ requestId: string; answer: InputAnswer }> => {
    const requestId = await post(method, params, timeoutMs, how);
    return { requestId, answer: await inputs.waitForAnswer(requestId, { signal: waitSignal, timeoutMs }) };
  };

  /** Registers a request and queues it on the task's outbox; resolves to its id. */
  const post = async (
    method: OutboxRequestMethod,
    params: Record<string, unknown>,
    timeoutMs: number,
    how: { readonly key?: string | undefined; readonly together?: AskedTogether } = {},
  ): Promise<string> => {
    const requestId = await inputs.create(taskId, ref.ownerId, method, timeoutMs + REQUEST_LINGER_MS);
    const meta = { ...(params._meta as Record<string, unknown> | undefined), [RELATED_TASK_META_KEY]: { taskId } };
    await inOrder(async () => {
      const request = { type: 'request' as const, requestId, method, params: { ...params, _meta: meta } };
      const { key, together } = how;
      await outbox.append(taskId, {
        ...request,
        ...(key !== undefined && { key }),
        ...(together !== undefined && { together: { id: together.id, of: together.of } }),
      });
    });
    return requestId;
  };

  /** Whether this elicitation or sampling request goes out as a client task (CLT-1). */
  const clientTaskFor = (method: 'elicitation/create' | 'sampling/createMessage', options?: InputOptions) => {
    const declared = knowsClient && declaresClientTasks(client, method);
    const mode = usesClientTask(options?.asTask, declared, services.clientTasks ?? WORKER_DEFAULTS.clientTasks);
    if (mode === 'undeclared') {
      const capability = method === 'elicitation/create' ? 'elicitation.create' : 'sampling.createMessage';
      throw new ClientCapabilityError(
        `The client did not declare task-augmented ${method} (capabilities.tasks.requests.${capability}); asTask: true needs it`,
      );
    }
    return mode;
  };

  const clientTaskPeer = (waitSignal: AbortSignal): ClientTaskPeer => ({
    ask: (method, params, timeoutMs) => post(method, params, timeoutMs),
    answer: (requestId, timeoutMs, abortable) =>
      inputs.waitForAnswer(requestId, abortable ? { signal: waitSignal, timeoutMs } : { timeoutMs }),
    post: async (method, params) => void (await post(method, params, CANCEL_LIFETIME_MS)),
    keep: (requestId, task) => inputs.keepClientTask(requestId, task),
    show: (message) => inOrder(() => store.setStatusMessage(ref, message)).then(() => {}),
    signal: waitSignal,
    cancellable: client.capabilities.tasks?.cancel !== undefined,
    minPollMs: services.clientTaskMinPollMs ?? WORKER_DEFAULTS.clientTaskMinPollMs,
    timeoutMs: services.inputTimeoutMs,
  });

  const context: ToolContext = {
    taskId,
    signal,
    attempt: options.attempt,
    client,
    principal: data.principal,
    logger,
    progress(progress, total, message) {
      if (!Number.isFinite(progress) || (total !== undefined && !Number.isFinite(total))) {
        logger.warn({ progress, total }, 'progress ignored: progress and total must be finite numbers');
        return Promise.resolve();
      }
      const entry = {
        type: 'progress' as const,
        progress,
        ...(total !== undefined && { total }),
        ...(message !== undefined && { message }),
      };
      return quietly('report progress', () => outbox.append(taskId, entry));
    },
    log(level, payload, loggerName) {
      if (!LoggingLevelSchema.safeParse(level).success) {
        logger.warn({ level }, 'log message ignored: not an MCP logging level');
        return Promise.resolve();
      }
      const entry = {
        type: 'log' as const,
        level,
        data: payload,
        ...(loggerName !== undefined && { logger: loggerName }),
      };
      return quietly('send a log message', () => outbox.append(taskId, entry));
    },
    resourceUpdated(uri) {
      return services.announce(String(uri));
    },
    listChanged(kind) {
      return services.announceListChanged?.(kind) ?? Promise.resolve();
    },
    setStatusMessage(text) {
      return quietly('set the status message', () => store.setStatusMessage(ref, String(text)));
    },
    async elicit(params: ElicitRequestParams, options?: InputOptions) {
      const parsed = ElicitRequestParamsSchema.safeParse(params);
      if (!parsed.success) throw new TypeError(`Invalid elicitation/create params: ${describeZodIssues(parsed.error)}`);
      const capability = client.capabilities.elicitation;
      if (knowsClient && capability === undefined) {
        throw new ClientCapabilityError(
          'The client did not declare the elicitation capability; check ctx.client.capabilities.elicitation first',
        );
      }
      if (knowsClient && parsed.data.mode === 'url' && capability?.url === undefined) {
        throw new ClientCapabilityError(
          'The client did not declare URL-mode elicitation (capabilities.elicitation.url)',
        );
      }
      return await ask('elicitation/create', params, ElicitResultSchema, options);
    },
    async sample(params: CreateMessageRequestParams, options?: InputOptions) {
      const parsed = CreateMessageRequestParamsSchema.safeParse(params);
      if (!parsed.success)
        throw new TypeError(`Invalid sampling/createMessage params: ${describeZodIssues(parsed.error)}`);
      const capability = client.capabilities.sampling;
      if (knowsClient && capability === undefined) {
        throw new ClientCapabilityError(
          'The client did not declare the sampling capability; check ctx.client.capabilities.sampling first',
        );
      }
      const withTools = parsed.data.tools !== undefined;
      if (knowsClient && withTools && capability?.tools === undefined) {
        throw new ClientCapabilityError(
          'The client did not declare tool use in sampling (capabilities.sampling.tools)',
        );
      }
      return withTools
        ? await ask('sampling/createMessage', params, CreateMessageResultWithToolsSchema, options)
        : await ask('sampling/createMessage', params, CreateMessageResultSchema, options);
    },
    async listRoots(options?: InputOptions) {
      if (knowsClient && client.capabilities.roots === undefined) {
        throw new ClientCapabilityError(
          'The client did not declare the roots capability; check ctx.client.capabilities.roots first',
        );
      }
      return await ask('roots/list', {}, ListRootsResultSchema, options);
    },
  };
  return { context, flush: () => queue.then(() => {}) };
}
