import {
  context,
  contextFromCarrier,
  errorMessage,
  failSpan,
  inSpan,
  type Logger,
  requeueJob,
  SpanKind,
  type TaskRef,
  type ToolJobData,
  taskRefOf,
  trace,
  tracer,
  UnrecoverableError,
  WaitingError,
} from '@taskgate/core';
import { ProtocolError } from '@taskgate/protocol';
import type { Job } from 'bullmq';
import { crashesBefore } from './crashes.js';
import type { AnyToolDefinition } from './define-tool.js';
import { type AbortKind, TaskAbortedError } from './errors.js';
import { type Finished, isProtocolError, protocolErrorOutcome, resultOutcome, toolError } from './outcome.js';
import type { TaskWatch } from './task-watch.js';
import { type ContextServices, createToolContext } from './tool-context-impl.js';
import { describeZodIssues } from './zod-issues.js';

/** An execution in progress, as the worker sees it (to abort it on shutdown or lock loss). */
export interface RunningJob {
  abort(kind: AbortKind): void;
}

export interface RunnerDeps extends ContextServices {
  readonly tools: ReadonlyMap<string, AnyToolDefinition>;
  /** A tool not published yet (tools found at run time): resolves once it is, or undefined after a while. */
  readonly laterTool?: (name: string) => Promise<AnyToolDefinition | undefined>;
  readonly watch: TaskWatch;
  readonly logger: Logger;
  /** How long to wait for an aborted handler to return before giving up on it (ms). */
  readonly abortGraceMs: number;
  /** Executions in progress, by task id (= job id). */
  readonly running: Map<string, RunningJob>;
}

/** A failure already stored on the task; BullMQ only needs to mark the job failed (no retry). */
export class RecordedFailure extends UnrecoverableError {}

class InvalidArguments extends Error {}

type Settled = { kind: 'value'; value: unknown } | { kind: 'error'; error: unknown } | { kind: 'abandoned' };

/** The handler's outcome; once `signal` aborts, waits at most `graceMs` more for it. */
function settle(run: Promise<unknown>, signal: AbortSignal, graceMs: number): Promise<Settled> {
  const settled = run.then(
    (value): Settled => ({ kind: 'value', value }),
    (error: unknown): Settled => ({ kind: 'error', error }),
  );
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      timer = setTimeout(() => resolve({ kind: 'abandoned' }), graceMs);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    void settled.then((outcome) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    });
  });
}

/**
 * Runs one BullMQ job: one execution of a task's tool. The attempt number counts every execution that
 * started before, failed ones (`attemptsMade`) and crashed ones (`crashesBefore`) alike. A crash spends an
 * attempt just like a thrown error, except for the first `crashReruns` crashes of a tool with `retryOnCrash`:
 * a task whose budget is spent is failed here, by the worker that picks up the stalled job, without running
 * the tool again. A task that is not live any more (cancelled while its worker died) is never run again.
 */
export async function runJob(deps: RunnerDeps, job: Job<ToolJobData>, token: string | undefined): Promise<void> {
  const data = job.data;
  if (typeof data?.taskId !== 'string' || typeof data.ownerId !== 'string' || typeof data.tool !== 'string') {
    throw new UnrecoverableError('Malformed job: a tool job needs string taskId, ownerId and tool');
  }
  const crashes = await crashesBefore(deps.store, data.taskId, job);
  const attempt = job.attemptsMade + crashes + 1;
  // One span per execution (attempt), in the trace of the request that created the task (job data `trace`).
  const attributes = {
    'messaging.system': 'bullmq',
    'messaging.operation.type': 'process',
    'messaging.operation.name': 'process',
    'messaging.destination.name': job.queueName,
    'messaging.message.id': data.taskId,
    'mcp.task.id': data.taskId,
    'mcp.tool': data.tool,
    'gen_ai.tool.name': data.tool,
    'taskgate.attempt': attempt,
  };
  const parent = parentContext(data);
  return inSpan(`process ${job.queueName}`, { kind: SpanKind.CONSUMER, attributes, parent }, () =>
    execute(deps, job, token, { attempt, crashes }),
  );
}

/**
 * The parent of an execution's span: the enqueueing span named by the job data, or BullMQ's own `process`
 * span when its telemetry is on (TASKGATE_TRACE_REDIS) and runs in that same trace.
 */
function parentContext(data: ToolJobData) {
  const fromJob = contextFromCarrier(data.trace);
  const active = trace.getActiveSpan();
  const traceId = trace.getSpan(fromJob)?.spanContext().traceId;
  return active?.isRecording() && active.spanContext().traceId === traceId ? context.active() : fromJob;
}

/** Records the task's status after this execution on the execution's span. */
function traceStatus(status: string): void {
  trace.getActiveSpan()?.setAttribute('mcp.task.status', status);
}

interface Execution {
  /** This execution's number (1-based): earlier failures and crashes, plus one. */
  readonly attempt: number;
  /** Earlier executions that crashed (see `crashesBefore`). */
  readonly crashes: number;
}

async function execute(deps: RunnerDeps, job: Job<ToolJobData>, token: string | undefined, run: Execution) {
  const data = job.data;
  const ref: TaskRef = taskRefOf(data);
  const budget = Math.max(1, job.opts.attempts ?? 1);
  const { attempt, crashes } = run;
  // Job id = task id; the principal (when auth is on) makes the audit entries attributable (SEC-4).
  const logger = deps.logger.child({
    taskId: data.taskId,
    tool: data.tool,
    queue: job.queueName,
    attempt,
    ...(data.principal !== undefined && { principal: data.principal }),
  });

  const def = deps.tools.get(data.tool) ?? (await deps.laterTool?.(data.tool));
  if (def === undefined) {
    const error = ProtocolError.methodNotFound(
      `Unknown tool '${data.tool}': no worker of queue '${job.queueName}' has it`,
    );
    return await record(deps, ref, protocolErrorOutcome(error), logger);
  }
  const used = job.attemptsMade + Math.max(0, crashes - def.crashReruns);
  if (used >= budget) {
    logger.warn({ used, budget, crashes }, 'the previous execution stopped without reporting and no attempts remain');
    return await record(deps, ref, toolError(crashedText(attempt - 1, budget, def.crashReruns)), logger);
  }
  const controller = new AbortController();
  let handlerSettled = false;
  const abort = (kind: AbortKind): void => {
    // Once the handler has settled, only this execution's own finish can follow: nothing left to abort.
    if (!handlerSettled && !controller.signal.aborted) controller.abort(new TaskAbortedError(kind));
  };
  // Watched before the start reads the task's status, so a cancellation right after it is not missed.
  const unwatch = await deps.watch.watch(data.taskId, abort);
  // The start is written before the tool runs: a later worker counts this execution if it dies (crashesBefore).
  const started = await deps.store.start(ref, attempt).catch(async (error: unknown) => {
    await unwatch();
    throw error;
  });
  if (!started.ok) {
    trace.getActiveSpan()?.setAttribute('taskgate.skipped', String(started.reason));
    await unwatch();
    logger.debug({ reason: started.reason }, 'the task is not live any more: job skipped');
    await def.onSkipped?.(data.taskId).catch((error: unknown) => {
      logger.warn({ err: errorMessage(error) }, 'the tool could not withdraw the skipped task');
    });
    return;
  }

  deps.running.set(data.taskId, { abort });
  let timer: NodeJS.Timeout | undefined;
  try {
    if (def.timeoutMs !== undefined) timer = setTimeout(() => abort('timeout'), def.timeoutMs);
    const handle = createToolContext({ services: deps, data, signal: controller.signal, attempt, logger });
    logger.debug({}, 'execution started');
    // The handler's own span: elicitation and sampling round trips (and any span the tool starts) are its children.
    const toolSpan = tracer().startSpan(`execute_tool ${def.name}`, {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': def.name,
        'taskgate.attempt': attempt,
      },
    });
    const run = context.with(trace.setSpan(context.active(), toolSpan), async () => {
      const args = def.inputSchema.safeParse(data.arguments);
      if (!args.success) {
        throw new InvalidArguments(`Invalid arguments for tool '${def.name}': ${describeZodIssues(args.error)}`);
      }
      return await def.handler(args.data, handle.context);
    });
    const settled = await settle(run, controller.signal, deps.abortGraceMs);
    if (settled.kind !== 'value')
      failSpan(toolSpan, settled.kind === 'error' ? errorName(settled.error) : settled.kind);
    toolSpan.end();
    handlerSettled = true;
    clearTimeout(timer);
    await handle.flush();
    const spent = used + 1;
    await conclude({
      deps,
      job,
      token,
      def,
      ref,
      settled,
      signal: controller.signal,
      spent,
      budget,
      logger,
    });
  } finally {
    clearTimeout(timer);
    deps.running.delete(data.taskId);
    await unwatch();
  }
}

interface Conclusion {
  readonly deps: RunnerDeps;
  readonly job: Job<ToolJobData>;
  readonly token: string | undefined;
  readonly def: AnyToolDefinition;
  readonly ref: TaskRef;
  readonly settled: Settled;
  readonly signal: AbortSignal;
  /** Attempts this execution has spent, itself included (crashes re-run by `retryOnCrash` are free). */
  readonly spent: number;
  readonly budget: number;
  readonly logger: Logger;
}

/** Stores the outcome of an execution, asks BullMQ for a retry, or releases the job. */
async function conclude(c: Conclusion): Promise<void> {
  const { deps, settled, logger } = c;
  const aborted = c.signal.aborted ? (c.signal.reason as TaskAbortedError).kind : undefined;
  if (aborted === 'cancelled' || aborted === 'gone' || aborted === 'finished') {
    // The task is terminal or gone: whatever the handler produced is discarded (CNL-3).
    trace.getActiveSpan()?.setAttribute('taskgate.discarded', aborted);
    if (aborted === 'cancelled') traceStatus('cancelled');
    logger.info({ aborted, settled: settled.kind }, 'the task ended while its tool ran; the result is discarded');
    return;
  }
  if ((aborted === 'shutdown' || aborted === 'lock-lost') && settled.kind !== 'value') {
    await release(c, aborted);
    throw new WaitingError();
  }

  let finished: Finished;
  let failure: unknown;
  if (aborted === 'timeout') {
    failure = new Error(`The tool did not finish within ${c.def.timeoutMs} ms`);
    finished = toolError(errorMessage(failure));
  } else if (settled.kind === 'value') {
    try {
      finished = resultOutcome(c.def, settled.value);
    } catch (error) {
      finished = toolError(errorMessage(error));
    }
  } else if (settled.kind === 'error' && isProtocolError(settled.error)) {
    finished = protocolErrorOutcome(settled.error);
  } else {
    const error = settled.kind === 'error' ? settled.error : new Error('The tool did not return');
    finished = toolError(errorMessage(error));
    if (!(error instanceof InvalidArguments)) failure = error;
  }

  if (failure !== undefined && c.spent < c.budget) {
    const message = errorMessage(failure);
    logger.warn({ err: message }, 'attempt failed; BullMQ retries it');
    await deps.store.setStatusMessage(c.ref, `Attempt ${c.spent} of ${c.budget} failed: ${message}; retrying`);
    throw failure instanceof Error ? failure : new Error(message);
  }
  const ended = await deps.store.finish(c.ref, finished.outcome, finished.statusMessage);
  if (!ended.ok) {
    logger.info({ reason: ended.reason }, 'the task ended before the tool did; the result is discarded');
    return;
  }
  await finishReplicated(deps, c.ref, logger);
  traceStatus(ended.task.status);
  logger.info(
    { audit: `task.${ended.task.status}`, status: ended.task.status, kind: ended.task.kind, owner: c.ref.ownerId },
    `task ${ended.task.status}`,
  );
  if (failure !== undefined || 'error' in finished.outcome) {
    // Keep the job in BullMQ's failed set for operators; the task already holds the outcome.
    throw new RecordedFailure(finished.statusMessage ?? 'failed');
  }
}

/** Puts the job back in its queue for another worker (shutdown), or leaves it to BullMQ's stalled checker. */
async function release(c: Conclusion, why: 'shutdown' | 'lock-lost'): Promise<void> {
  c.logger.warn({ why }, 'execution abandoned; the job goes back to the queue');
  if (why !== 'shutdown' || c.token === undefined) return;
  try {
    await c.deps.store.setStatusMessage(c.ref, 'The worker shut down; another worker will run the task again');
    await requeueJob(c.job, c.token);
  } catch (error) {
    // The lock lapsed meanwhile: the stalled checker returns the job to the queue instead.
    c.logger.warn({ err: errorMessage(error) }, 'could not release the job');
  }
}

/** The error's class name for `error.type` (never its message: it may quote the arguments). */
function errorName(error: unknown): string {
  if (isProtocolError(error)) return String(error.code);
  return error instanceof Error ? error.constructor.name : typeof error;
}

/** Why a task whose worker crashed is not run again: which execution died, and what the tool's author can set. */
export function crashedText(execution: number, attempts: number, crashReruns: number): string {
  const stopped = `The worker running this tool stopped unexpectedly (attempt ${execution} of ${attempts + crashReruns})`;
  const allowed =
    crashReruns === 0
      ? 'no attempts remain; a tool that may run again sets `attempts` or `retryOnCrash`'
      : `no attempts remain after ${crashReruns} re-runs allowed by \`retryOnCrash\``;
  return `${stopped}; ${allowed}`;
}

/** Stores a final failure decided before any execution, then fails the job without retry. */
async function record(deps: RunnerDeps, ref: TaskRef, finished: Finished, logger: Logger): Promise<void> {
  const ended = await deps.store.finish(ref, finished.outcome, finished.statusMessage);
  if (!ended.ok) {
    logger.debug({ reason: ended.reason }, 'the task is not live any more: job skipped');
    return;
  }
  await finishReplicated(deps, ref, logger);
  traceStatus(ended.task.status);
  logger.info(
    { audit: `task.${ended.task.status}`, status: ended.task.status, kind: ended.task.kind, owner: ref.ownerId },
    'task failed',
  );
  throw new RecordedFailure(finished.statusMessage ?? 'failed');
}

/**
 * With TASKGATE_REDIS_WAIT_REPLICAS, a job is let go only once the replicas hold its task's finish. The record
 * and the job may live on different masters (a cluster): a failover that lost the finish but kept the job's
 * completion would leave the task `working` for good. Unconfirmed, the job stays active and BullMQ's stalled
 * checker hands it out again: the next run finds the task finished (and skips), or the finish lost (and runs).
 */
async function finishReplicated(deps: RunnerDeps, ref: TaskRef, logger: Logger): Promise<void> {
  try {
    await deps.store.confirmReplicated(ref.taskId);
  } catch (error) {
    logger.warn(
      { err: errorMessage(error) },
      'the finish is not confirmed on the replicas; the job is left to run again',
    );
    throw new WaitingError();
  }
}
