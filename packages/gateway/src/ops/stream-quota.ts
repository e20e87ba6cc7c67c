import { ErrorCode, ProtocolError } from '@taskgate/protocol';
import { HttpError } from '../messages/http-error.js';

/** How long a client refused for too many streams is asked to wait (ms): one stream of its own may end by then. */
export const STREAM_RETRY_AFTER_MS = 1000;

/** What a refusal for too many streams carries in `error.data`. */
export interface StreamLimitData {
  readonly limit: number;
  readonly retryAfterMs: number;
}

/** -32012 in a JSON-RPC response (a POST whose answer would be a stream). */
export function streamLimitExceeded(limit: number): ProtocolError {
  const data: StreamLimitData = { limit, retryAfterMs: STREAM_RETRY_AFTER_MS };
  return new ProtocolError(ErrorCode.StreamLimitExceeded, streamLimitMessage(limit), data);
}

/** HTTP 429 with -32012 and `Retry-After` (a GET stream, which has no JSON-RPC id to answer). */
export function streamLimitHttpError(limit: number): HttpError {
  return new HttpError(429, ErrorCode.StreamLimitExceeded, streamLimitMessage(limit), {
    'Retry-After': String(Math.ceil(STREAM_RETRY_AFTER_MS / 1000)),
  });
}

function streamLimitMessage(limit: number): string {
  return (
    `Too many open streams: at most ${limit} SSE streams of one principal may be open on this server at once. ` +
    'Close one (or wait for a task to finish), then try again.'
  );
}

/**
 * The per-principal limit of open SSE streams on this gateway (GET streams, tasks/result streams, direct
 * calls, resumptions): a count per owner in memory, taken before a stream opens and given back when its
 * connection closes. It holds per pod, not per deployment: a stream is one connection to one pod, and the
 * count ends with it (a killed pod leaves nothing behind to expire), so N pods allow N times the limit.
 */
export class StreamQuota {
  readonly #open = new Map<string, number>();

  /** `max` = streams per owner (0 = unlimited). */
  constructor(readonly max: number) {}

  /** Takes one of `owner`'s places, or returns undefined when all are taken; the release is idempotent. */
  take(owner: string): (() => void) | undefined {
    if (this.max === 0) return () => {};
    const open = this.#open.get(owner) ?? 0;
    if (open >= this.max) return undefined;
    this.#open.set(owner, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(owner) ?? 1) - 1;
      if (left <= 0) this.#open.delete(owner);
      else this.#open.set(owner, left);
    };
  }

  /** Streams `owner` has open on this gateway. */
  openOf(owner: string): number {
    return this.#open.get(owner) ?? 0;
  }
}
