import { errorMessage, isRedisUnavailable, Keys, type Logger } from '@taskgate/core';
import {
  ErrorCode,
  isJsonRpcRequest,
  type JsonRpcMessage,
  type JsonRpcRequest,
  ProtocolError,
  toJsonRpcError,
} from '@taskgate/protocol';
import type { Response } from 'express';
import type { Caller } from '../auth/caller.js';
import { HttpError } from '../messages/http-error.js';
import { errorResponse, resultMessage } from '../messages/json-rpc.js';
import type { GatewayMetrics } from '../ops/gateway-metrics.js';
import { operationOf, type RateLimits, retryAfterMsOf } from '../ops/rate-limits.js';
import { type StreamQuota, streamLimitExceeded } from '../ops/stream-quota.js';
import { describeError, describeReply } from '../ops/trace-request.js';
import { answerResult } from '../streams/result-wait.js';
import type { StreamRegistry } from '../streams/stream-registry.js';
import { openTaskStream } from '../streams/task-stream.js';
import { type Revision, type WireHeaders, type WireMessage, WireRefusal, type WireRequest } from '../wire/codec.js';
import { ResponseChannel } from './answer-channel.js';

/** What the runner itself uses, beside what each revision's codec names. */
export interface RunnerServices {
  readonly metrics: GatewayMetrics;
  readonly rateLimits: RateLimits;
  /** The per-principal limit of open SSE streams on this gateway. */
  readonly streamQuota: StreamQuota;
  readonly streams: StreamRegistry;
}

/**
 * One parsed message of `POST /mcp` on its revision: a notification or a response is handed to the revision and
 * answered 202; a request runs (see `runRequest`).
 */
export async function runMessage<S>(
  services: S & RunnerServices,
  revision: Revision<S>,
  headers: WireHeaders,
  res: Response,
  caller: Caller,
  message: JsonRpcMessage,
  logger: Logger,
): Promise<void> {
  if (!isJsonRpcRequest(message)) {
    await revision.accept(services, headers, caller, message, logger);
    res.status(202).end();
    return;
  }
  return runRequest(services, revision, headers, res, caller, message, logger);
}

/**
 * Every request of either revision, once: the codec decodes it (refusals thrown), the caller's rate limit for
 * the method's operation class is spent (SEC-3), a place among the owner's open streams is taken when the answer
 * may be one, the handler runs and the codec encodes its answer; then the answer is written as JSON or a stream.
 * Every failure is counted, traced and answered as a JSON-RPC error with the request's id (and `Retry-After`
 * when it has a retry hint), except two the HTTP layer answers: a refusal before the request could be read as
 * one (`HttpError`), and Redis not answering (503 + Retry-After).
 */
async function runRequest<S>(
  services: S & RunnerServices,
  revision: Revision<S>,
  headers: WireHeaders,
  res: Response,
  caller: Caller,
  request: JsonRpcRequest,
  logger: Logger,
): Promise<void> {
  let decide = (): void => {};
  const undecided = new Promise<void>((resolve) => {
    decide = resolve;
  });
  try {
    return await answerRequest(services, revision, headers, res, caller, request, logger, undecided);
  } finally {
    decide();
  }
}

async function answerRequest<S>(
  services: S & RunnerServices,
  revision: Revision<S>,
  headers: WireHeaders,
  res: Response,
  caller: Caller,
  request: JsonRpcRequest,
  logger: Logger,
  undecided: Promise<void>,
): Promise<void> {
  const { id, method } = request;
  const { metrics } = services;
  const started = performance.now();
  const seconds = (): number => (performance.now() - started) / 1000;
  const channel = new ResponseChannel(services.streams, res);
  let wire: WireRequest | undefined;
  let release: (() => void) | undefined;
  let answer: WireMessage;
  try {
    wire = await revision.open(services, headers, caller, request, logger);
    const operation = operationOf(method);
    if (operation !== undefined) await services.rateLimits.consume(operation, wire.owner, wire.logger);
    // A place among the owner's open streams is taken before a call that may answer as a stream starts (a
    // direct call refused afterwards would run with nobody to answer).
    if (wire.mayStream) {
      release = takeStreamPlace(services.streamQuota, wire);
      // Undecided until it answered or opened its stream: a drain waits for it before it counts the open
      // streams, rather than closing a connection whose call is running.
      services.streams.deciding(undecided);
    }
    answer = await wire.run(channel);
  } catch (error) {
    release?.();
    if (error instanceof HttpError) throw error;
    if (isRedisUnavailable(error)) {
      metrics.rpcRequest(method, seconds(), ErrorCode.InternalError);
      throw error;
    }
    logFailure(wire?.logger ?? logger, error);
    const rpcError = toJsonRpcError(error);
    describeError(rpcError.code);
    metrics.rpcRequest(method, seconds(), rpcError.code);
    const retryAfterMs = retryAfterMsOf(error);
    if (retryAfterMs !== undefined && !channel.started) {
      res.set('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    }
    const status = error instanceof WireRefusal ? error.status : revision.errorStatus(rpcError.code);
    channel.finish(status, errorResponse(id, rpcError));
    return;
  }
  // A stream the revision drove to its end (subscriptions/listen) is not a request that took time to answer.
  if (answer.kind === 'streamed') return;
  metrics.rpcRequest(method, seconds());
  describeReply(answer);
  if (answer.kind === 'result') {
    release?.();
    if (answer.sessionId !== undefined) res.set('Mcp-Session-Id', answer.sessionId);
    channel.finish(200, resultMessage(id, answer.result));
    return;
  }
  if (release !== undefined) {
    if (res.destroyed) release();
    // The release is idempotent: `on` spares the wrapper `once` makes for every waiting request.
    else res.on('close', release);
  }
  const { task, session } = answer;
  const target = { kind: answer.role, taskId: task.taskId, rpcId: id, task };
  // tasks/result waits in the process first: a task that ends soon is answered as JSON, with no stream.
  const answered = answer.role === 'result' ? answerResult(session, res, target) : undefined;
  // Resolves once the stream is set up: the waiting stream counts itself (`StreamRegistry.waiting`).
  return answered ?? openTaskStream(session, res, target);
}

/** One of the owner's open-stream places on this gateway, or -32012 when all are taken. */
function takeStreamPlace(quota: StreamQuota, wire: WireRequest): () => void {
  const release = quota.take(wire.owner);
  if (release !== undefined) return release;
  wire.logger.warn(
    { audit: 'stream_limited', owner: Keys.ownerId(wire.owner), limit: quota.max },
    'too many open streams',
  );
  throw streamLimitExceeded(quota.max);
}

function logFailure(logger: Logger, error: unknown): void {
  if (error instanceof ProtocolError) {
    logger.debug({ code: error.code, reason: error.message }, 'request refused');
  } else {
    logger.error({ err: errorMessage(error) }, 'request failed');
  }
}
