import {
  contextFromCarrier,
  errorMessage,
  inSpan,
  type Logger,
  type ReadJobData,
  type ReadRequest,
  SpanKind,
  type StoredResult,
  type TaskRef,
  type TaskStore,
  taskRefOf,
} from '@taskgate/core';
import { ErrorCode, ProtocolError } from '@taskgate/protocol';
import type { Job } from 'bullmq';
import { crashesBefore } from './crashes.js';
import type { AnyPromptDefinition } from './define-prompt.js';
import type { ResourceDefinition, ResourceTemplateDefinition } from './define-resource.js';
import { TaskAbortedError } from './errors.js';
import { isProtocolError } from './outcome.js';
import type { ReadContext } from './read-context.js';
import { ReadInput } from './read-input.js';
import { completionResult, promptResult, readResourceResult } from './read-results.js';
import type { TaskWatch } from './task-watch.js';
import { clientOf } from './tool-context-impl.js';
import { describeZodIssues } from './zod-issues.js';

/** The resources, templates and prompts one worker serves, by the key the gateway routes them with. */
export interface OfferingSet {
  readonly resources: ReadonlyMap<string, ResourceDefinition>;
  readonly templates: ReadonlyMap<string, ResourceTemplateDefinition>;
  readonly prompts: ReadonlyMap<string, AnyPromptDefinition>;
}

export interface ReadRunnerDeps {
  readonly store: TaskStore;
  readonly watch: TaskWatch;
  readonly logger: Logger;
  readonly offerings: OfferingSet;
  /** Announces `notifications/resources/updated` for a URI. */
  readonly announce: (uri: string) => Promise<void>;
}

function resourceNotFound(uri: string): ProtocolError {
  return new ProtocolError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
}

/** Runs one read for its handler and returns the result the client gets; throws what becomes its error. */
async function serve(offerings: OfferingSet, read: ReadRequest, ctx: ReadContext): Promise<Record<string, unknown>> {
  switch (read.method) {
    case 'resources/read': {
      const { uri } = read;
      if (read.uriTemplate === undefined) {
        const def = offerings.resources.get(uri);
        if (def === undefined) throw resourceNotFound(uri);
        return readResourceResult(uri, def.resource.mimeType, await def.read({ ...ctx, uri }));
      }
      const def = offerings.templates.get(read.uriTemplate);
      const variables = def?.parsed.match(uri);
      if (def === undefined || variables === undefined) throw resourceNotFound(uri);
      return readResourceResult(uri, def.template.mimeType, await def.read(variables, { ...ctx, uri }));
    }
    case 'prompts/get': {
      const def = offerings.prompts.get(read.name);
      if (def === undefined) {
        throw ProtocolError.invalidParams(`Unknown prompt: '${read.name}'. Call prompts/list to see the prompts.`);
      }
      const args = def.arguments.safeParse(read.arguments);
      if (!args.success) {
        throw ProtocolError.invalidParams(
          `Invalid arguments for prompt '${read.name}': ${describeZodIssues(args.error)}`,
        );
      }
      return promptResult(await def.get(args.data, ctx));
    }
    case 'completion/complete': {
      const { ref, argument } = read;
      const completers =
        ref.type === 'ref/prompt'
          ? offerings.prompts.get(ref.name)?.complete
          : offerings.templates.get(ref.uri)?.complete;
      const completer = completers?.[argument.name];
      if (completer === undefined) return { completion: { values: [] } };
      const context = { ...ctx, arguments: read.context?.arguments ?? {} };
      return completionResult(await completer(argument.value, context));
    }
  }
}

/**
 * Runs one read job (`resources/read`, `prompts/get`, `completion/complete`) under its hidden task record:
 * the result or JSON-RPC error is stored there for the waiting gateway. Never retried: a read the worker did
 * not finish (it crashed) fails with -32603, and the client may simply ask again.
 */
export function runRead(deps: ReadRunnerDeps, job: Job<ReadJobData>): Promise<void> {
  const data = job.data;
  // In the trace of the request that asked for the read (job data `trace`).
  const attributes = {
    'messaging.system': 'bullmq',
    'messaging.operation.type': 'process',
    'messaging.operation.name': 'process',
    'messaging.destination.name': job.queueName,
    'messaging.message.id': data.taskId,
    'mcp.method.name': data.read.method,
  };
  const parent = contextFromCarrier(data.trace);
  return inSpan(`process ${job.queueName}`, { kind: SpanKind.CONSUMER, attributes, parent }, () => read(deps, job));
}

async function read(deps: ReadRunnerDeps, job: Job<ReadJobData>): Promise<void> {
  const data = job.data;
  const ref: TaskRef = taskRefOf(data);
  const logger = deps.logger.child({ taskId: data.taskId, read: data.read.method, queue: job.queueName });
  const finish = async (outcome: StoredResult): Promise<void> => {
    const ended = await deps.store.finish(ref, outcome);
    if (!ended.ok) logger.debug({ reason: ended.reason }, 'the read ended before its handler did; result discarded');
  };
  try {
    if (job.attemptsMade > 0 || (await crashesBefore(deps.store, data.taskId, job)) > 0) {
      const message = 'The worker serving this request stopped unexpectedly; try again';
      return await finish({ error: { code: ErrorCode.InternalError, message } });
    }
    const started = await deps.store.start(ref, 1);
    if (!started.ok) return;
    const controller = new AbortController();
    const unwatch = await deps.watch.watch(data.taskId, (end) => controller.abort(new TaskAbortedError(end)));
    let outcome: StoredResult;
    const client = clientOf(data);
    const input = new ReadInput(data, client);
    try {
      const ctx: ReadContext = {
        signal: controller.signal,
        client,
        principal: data.principal,
        logger,
        resourceUpdated: deps.announce,
        elicit: (params, options) => input.elicit(params, options),
      };
      const result = await serve(deps.offerings, data.read, ctx);
      outcome = { result: { ...(input.required() ?? result) } };
    } catch (error) {
      // A question without its answer ends the execution, whatever the handler made of the rejection.
      const required = input.required();
      const code = isProtocolError(error) ? error.code : ErrorCode.InternalError;
      if (required !== undefined) outcome = { result: { ...required } };
      else outcome = { error: isProtocolError(error) ? error.toJSON() : { code, message: errorMessage(error) } };
      if (required === undefined) logger.debug({ code, err: errorMessage(error) }, 'read failed');
    } finally {
      await unwatch().catch(() => {});
    }
    if (!controller.signal.aborted) await finish(outcome);
  } catch (error) {
    // A Redis failure: the gateway's wait times out, and nothing here may turn into a tool-style outcome.
    logger.warn({ err: errorMessage(error) }, 'could not run the read');
  }
}
