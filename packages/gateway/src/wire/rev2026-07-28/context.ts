import { randomBytes } from 'node:crypto';
import type { StoredTask } from '@taskgate/core';
import { Keys } from '@taskgate/core';
import { ProtocolError, RELATED_TASK_META_KEY, TASKS_EXTENSION } from '@taskgate/protocol';
import type { RpcContext } from '../../methods/context.js';
import type { StatelessMeta } from './envelope.js';
import type { StatelessAnswer } from './notices.js';
import { RequestStateCodec } from './request-state.js';
import type { InputRequestsView } from './task-view.js';

/** One stateless request: an RpcContext whose "session" is what the request's `_meta` declares. */
export interface StatelessContext extends RpcContext {
  readonly meta: StatelessMeta;
  /** True when auth is off: tasks are bound to their unguessable id only, not to an owner. */
  readonly anonymous: boolean;
  /** Where the answer goes: JSON, or a stream once a notification went out. */
  readonly answer: StatelessAnswer;
  /** The request's `Mcp-Param-*` headers by lower-case name (SEP-2243). */
  readonly params: ReadonlyMap<string, string>;
}

/** The owner of what an unauthenticated stateless request creates: a fresh random one, so nothing is shared. */
export function anonymousOwner(): string {
  return `stateless.${randomBytes(18).toString('base64url')}`;
}

const codecs = new WeakMap<object, RequestStateCodec>();

/** The request-state codec of a gateway (one per services object). */
export function requestStates(ctx: StatelessContext): RequestStateCodec {
  let codec = codecs.get(ctx.services);
  if (codec === undefined) {
    const { requestStateSecret, cursorSecret } = ctx.services.options;
    codec = new RequestStateCodec(requestStateSecret ?? cursorSecret);
    codecs.set(ctx.services, codec);
  }
  return codec;
}

/** True when the request's `_meta` declares the tasks extension. */
export function declaresTasks(ctx: StatelessContext): boolean {
  const extensions = ctx.meta.clientCapabilities.extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

/**
 * The record of a task a stateless request names: the principal's (with auth on, whichever wire created it),
 * or, with auth off, any task the 2026-07-28 wire created (bound to its unguessable id only). Undefined when
 * there is none of those, or it is a direct call's hidden record.
 */
export async function visibleTask(ctx: StatelessContext, taskId: string): Promise<StoredTask | undefined> {
  if (typeof taskId !== 'string' || taskId.length > 128) return undefined;
  const task = await ctx.services.tasks.read(taskId);
  if (task === undefined || task.kind !== 'task') return undefined;
  if (ctx.anonymous) return task.wire === '2026-07-28' ? task : undefined;
  return task.ownerId === Keys.ownerId(ctx.owner) ? task : undefined;
}

/** A pending input request of a task: its request id (where the answer goes) and what the client sees. */
interface PendingInput {
  readonly requestId: string;
  readonly request: { method: string; params: Record<string, unknown> };
}

/**
 * The task's input requests still waiting for an answer, by key (the tool's key, else the request id), from
 * its outbox. The related-task `_meta` of the 2025 wire is left out: the task id is the request's context.
 */
async function pending(ctx: StatelessContext, taskId: string): Promise<Map<string, PendingInput>> {
  const entries = await ctx.services.outbox.range(taskId, '-', '+');
  const byId = new Map<string, { key: string; request: PendingInput['request'] }>();
  for (const { message } of entries) {
    if (message.type !== 'request') continue;
    const { [RELATED_TASK_META_KEY]: _related, ...meta } = (message.params._meta ?? {}) as Record<string, unknown>;
    const { _meta: _sent, ...rest } = message.params;
    const params = Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta };
    byId.set(message.requestId, { key: message.key ?? message.requestId, request: { method: message.method, params } });
  }
  const open = await ctx.services.inputs.unanswered(taskId, [...byId.keys()]);
  const byKey = new Map<string, PendingInput>();
  for (const requestId of open) {
    const found = byId.get(requestId);
    if (found !== undefined) byKey.set(found.key, { requestId, request: found.request });
  }
  return byKey;
}

/** The task's pending input requests as the `inputRequests` map of this wire. */
export async function pendingInputs(ctx: StatelessContext, taskId: string): Promise<InputRequestsView> {
  const view: InputRequestsView = {};
  for (const [key, { request }] of await pending(ctx, taskId)) view[key] = request;
  return view;
}

/**
 * Records the answers of `inputResponses` to the task's pending requests, by key. Keys that name no pending
 * request of the task (unknown, answered before) are ignored. -32602 names an answer that is not an object.
 */
export async function answerInputs(ctx: StatelessContext, task: StoredTask, responses: unknown): Promise<number> {
  if (responses === undefined) return 0;
  if (typeof responses !== 'object' || responses === null || Array.isArray(responses)) {
    throw ProtocolError.invalidParams('Invalid params: params.inputResponses must be an object of answers by key');
  }
  const entries = Object.entries(responses as Record<string, unknown>);
  const open = await pending(ctx, task.taskId);
  for (const [key, value] of entries) {
    if (open.has(key) && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      throw ProtocolError.invalidParams(
        `Invalid params: params.inputResponses["${key.slice(0, 64)}"] must be an object`,
      );
    }
  }
  let answered = 0;
  for (const [key, value] of entries) {
    const input = open.get(key);
    if (input === undefined) continue;
    const outcome = await ctx.services.inputs.answer(input.requestId, task.ownerId, {
      result: value as Record<string, unknown>,
    });
    if (outcome === 'ok') answered++;
  }
  return answered;
}

/** `params.inputResponses`: absent, or an object of answers (each an object); -32602 otherwise. */
export function inputResponsesOf(params: Record<string, unknown>): Record<string, unknown> | undefined {
  const responses = params.inputResponses;
  if (responses === undefined) return undefined;
  if (typeof responses !== 'object' || responses === null || Array.isArray(responses)) {
    throw ProtocolError.invalidParams('Invalid params: params.inputResponses must be an object of answers by key');
  }
  for (const [key, value] of Object.entries(responses)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw ProtocolError.invalidParams(
        `Invalid params: params.inputResponses["${key.slice(0, 64)}"] must be an object`,
      );
    }
  }
  return responses as Record<string, unknown>;
}
