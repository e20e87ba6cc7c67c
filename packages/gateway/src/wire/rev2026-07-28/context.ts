import { randomBytes } from 'node:crypto';
import type { Call } from '../../methods/context.js';
import type { AnswerChannel } from '../codec.js';
import type { GatewayServices } from '../services.js';
import { declaresTasks as declaresTasksExtension } from './codec.js';
import type { StatelessMeta } from './envelope.js';
import { RequestStateCodec } from './request-state.js';

/** One stateless request: a Call whose "session" is what the request's `_meta` declares. */
export interface StatelessContext extends Call<GatewayServices> {
  readonly meta: StatelessMeta;
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
  return declaresTasksExtension(ctx.meta);
}
