import { randomBytes } from 'node:crypto';
import type { EventBus, ResourceSubscriptions } from '@taskgate/core';
import type { Call } from '../../methods/context.js';
import type { OfferingListServices, OfferingReadServices } from '../../methods/prompts.js';
import type { TasksCancelServices } from '../../methods/tasks-cancel.js';
import type { TasksGetServices } from '../../methods/tasks-get.js';
import type { TasksUpdateServices } from '../../methods/tasks-update.js';
import type { ToolsCallServices } from '../../methods/tools-call.js';
import type { ToolsListServices } from '../../methods/tools-list.js';
import type { ResolvedGatewayOptions } from '../../options.js';
import type { AbandonServices } from '../../tasks/cancel-call.js';
import type { AnswerChannel } from '../codec.js';
import { declaresTasks as declaresTasksExtension } from './codec.js';
import type { Rev2026Meta } from './envelope.js';
import { RequestStateCodec } from './request-state.js';

/**
 * What revision 2026-07-28 uses: its handlers' services as each names them, what a call's rounds and a listen
 * stream follow (the bus, resource subscriptions), the cancellation of a call nobody waits for, the options.
 */
export type Rev2026Services = ToolsCallServices &
  ToolsListServices &
  OfferingListServices &
  OfferingReadServices &
  TasksGetServices &
  TasksUpdateServices &
  TasksCancelServices &
  AbandonServices & {
    readonly bus: EventBus;
    readonly subscriptions: ResourceSubscriptions;
    readonly options: ResolvedGatewayOptions;
  };

/** One stateless request: a Call whose "session" is what the request's `_meta` declares. */
export interface Rev2026Context extends Call<Rev2026Services> {
  readonly meta: Rev2026Meta;
  /** True when auth is off: tasks are bound to their unguessable id only, not to an owner. */
  readonly anonymous: boolean;
  /** Where the answer goes: JSON, or a stream once a notification went out. */
  readonly answer: AnswerChannel;
  /** The request's `Mcp-Param-*` headers by lower-case name (SEP-2243). */
  readonly params: ReadonlyMap<string, string>;
}

/** The owner of what an unauthenticated stateless request creates: a fresh random one, so nothing is shared. */
export function anonymousOwner(): string {
  return `stateless.${randomBytes(18).toString('base64url')}`;
}

const codecs = new WeakMap<object, RequestStateCodec>();

/** The request-state codec of a gateway (one per services object). */
export function requestStates(ctx: Rev2026Context): RequestStateCodec {
  let codec = codecs.get(ctx.services);
  if (codec === undefined) {
    const { requestStateSecret, cursorSecret } = ctx.services.options;
    codec = new RequestStateCodec(requestStateSecret ?? cursorSecret);
    codecs.set(ctx.services, codec);
  }
  return codec;
}

/** True when the request's `_meta` declares the tasks extension. */
export function declaresTasks(ctx: Rev2026Context): boolean {
  return declaresTasksExtension(ctx.meta);
}
