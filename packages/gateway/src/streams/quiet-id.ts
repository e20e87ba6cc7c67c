import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RequestId } from '@taskgate/protocol';

/** What a quiet stream's priming event id names: the stream, the task it waits for, and the request it answers. */
export interface QuietTarget {
  readonly streamId: string;
  readonly taskId: string;
  readonly rpcId: RequestId;
}

/** Longest id a quiet stream primes with; a longer request id gets a logged stream instead. */
export const QUIET_ID_MAX = 512;

const SHAPE = /^([A-Za-z0-9_-]{26})_0-0\.([A-Za-z0-9_-]{1,600})\.([A-Za-z0-9_-]{22})$/;

/**
 * Priming event ids of quiet streams: a tasks/result stream that stores nothing in Redis until it has
 * something to store (see `QuietResult`). The id itself carries what a resumption on any pod needs — the
 * task and the request id — with a MAC over them and the session (HMAC-SHA256 with the cursor secret, which
 * every pod shares), so a client can name only streams its own session was given. The stream id comes first,
 * as in every event id: once the stream did store something, a resumption finds its state under that id and
 * replays its log from the start.
 */
export class QuietIds {
  readonly #secret: string | Uint8Array;

  constructor(secret: string | Uint8Array) {
    this.#secret = secret;
  }

  /** The priming id of a quiet stream of `session` (a digest of its id), or undefined when it would be too long. */
  encode(session: string, target: QuietTarget): string | undefined {
    const payload = Buffer.from(JSON.stringify([target.taskId, target.rpcId])).toString('base64url');
    const id = `${target.streamId}_0-0.${payload}.${this.#mac(session, target.streamId, payload)}`;
    return id.length <= QUIET_ID_MAX ? id : undefined;
  }

  /** Whether `eventId` has the shape of a quiet stream's id (valid or not). */
  static looksQuiet(eventId: string): boolean {
    return SHAPE.test(eventId);
  }

  /** What a quiet id names, when it is one this server gave `session`; undefined otherwise. */
  decode(session: string, eventId: string): QuietTarget | undefined {
    const match = SHAPE.exec(eventId);
    if (match === null) return undefined;
    const [, streamId = '', payload = '', mac = ''] = match;
    const expected = Buffer.from(this.#mac(session, streamId, payload));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const decoded: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (!Array.isArray(decoded) || decoded.length !== 2) return undefined;
    const [taskId, rpcId] = decoded as unknown[];
    if (typeof taskId !== 'string' || (typeof rpcId !== 'string' && typeof rpcId !== 'number')) return undefined;
    return { streamId, taskId, rpcId };
  }

  #mac(session: string, streamId: string, payload: string): string {
    return createHmac('sha256', this.#secret)
      .update(`taskgate quiet stream\n${session}\n${streamId}\n${payload}`)
      .digest('base64url')
      .slice(0, 22);
  }
}
