import { createHash } from 'node:crypto';
import { isReadInputRequired, Keys } from '@taskgate/core';
import { inputResponsesOf } from './codec.js';
import { type Rev2026Context, requestStates } from './context.js';

/** The methods whose handlers run as reads on a worker and may ask for input in rounds. */
export const READ_METHODS: ReadonlySet<string> = new Set(['prompts/get', 'resources/read', 'completion/complete']);

/** How long a read's `requestState` stays valid. */
const READ_STATE_TTL_MS = 10 * 60_000;

/** One round of a read: what the request asks (its params without the round's fields) and the answers so far. */
export interface ReadRound {
  /** The params the read's handler gets: without `inputResponses`, `requestState` and `_meta`. */
  readonly params: Record<string, unknown>;
  /** Every answer the client has given in this read's rounds, by input request key. */
  readonly answers: Readonly<Record<string, unknown>>;
  /** What a state of this read is bound to: the method and a digest of its params. */
  readonly subject: string;
}

/** JSON with object keys sorted, so the same params give the same digest whatever their order on the wire. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The round a read request is: its own params, and the answers of its `requestState` (issued for the same
 * method, params and owner: -32602 otherwise) with those of its `inputResponses` on top.
 */
export function readRound(ctx: Rev2026Context, method: string, params: Record<string, unknown>): ReadRound {
  const { inputResponses: _responses, requestState, _meta, ...own } = params;
  const subject = `${method} ${createHash('sha256').update(canonical(own)).digest('base64url').slice(0, 32)}`;
  const responses = inputResponsesOf(params) ?? {};
  if (requestState === undefined) return { params: own, answers: responses, subject };
  const owner = ctx.anonymous ? undefined : Keys.ownerId(ctx.owner);
  const state = requestStates(ctx).decode(requestState, owner, subject);
  return { params: own, answers: { ...state.answers, ...responses }, subject };
}

/**
 * When the read asked for input: `input_required` with its requests and a signed `requestState` carrying the
 * answers so far (the handler runs again with them on the next round). Undefined when the read answered.
 */
export function readAnswer(
  ctx: Rev2026Context,
  round: ReadRound,
  result: Record<string, unknown>,
): Record<string, unknown> | undefined {
  if (!isReadInputRequired(result)) return undefined;
  const requestState = requestStates(ctx).encode({
    ownerId: Keys.ownerId(ctx.owner),
    tool: round.subject,
    answers: round.answers,
    expiresAt: Date.now() + READ_STATE_TTL_MS,
  });
  return { resultType: 'input_required', inputRequests: result.inputRequests, requestState };
}
