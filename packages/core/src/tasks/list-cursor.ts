import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidCursor } from '../errors.js';

/** Where the next page of an owner's task index starts: right after the entry (score, id). */
export interface ListPosition {
  readonly score: number;
  readonly id: string;
}

/**
 * Opaque `tasks/list` cursors: a keyset position, the time it was issued, and an HMAC over both and the
 * owner. Any gateway with the same secret can continue a listing; a cursor from another owner, a tampered
 * one, garbage or an old one is refused with -32602 (LST-3).
 */
export class ListCursorCodec {
  readonly #secret: Uint8Array;

  constructor(
    secret: string | Uint8Array,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#secret = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
    if (this.#secret.byteLength < 16) throw new Error('The cursor secret must be at least 16 bytes long');
  }

  /** A cursor for `ownerId` that continues after `position`. */
  encode(ownerId: string, position: ListPosition): string {
    const payload = Buffer.from(JSON.stringify([position.score, position.id, this.now()])).toString('base64url');
    return `${payload}.${this.#mac(ownerId, payload)}`;
  }

  /** The position in a cursor, or a -32602 ProtocolError. */
  decode(ownerId: string, cursor: string): ListPosition {
    const [payload, mac, ...rest] = cursor.split('.');
    if (payload === undefined || mac === undefined || rest.length > 0 || cursor.length > 512) {
      throw invalidCursor('it is not a cursor this server issued');
    }
    const expected = Buffer.from(this.#mac(ownerId, payload));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw invalidCursor('it is not a cursor this server issued to you');
    }
    let fields: unknown;
    try {
      fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalidCursor('it is malformed');
    }
    if (
      !Array.isArray(fields) ||
      typeof fields[0] !== 'number' ||
      typeof fields[1] !== 'string' ||
      typeof fields[2] !== 'number'
    ) {
      throw invalidCursor('it is malformed');
    }
    if (this.now() - fields[2] > this.maxAgeMs) throw invalidCursor('it has expired');
    return { score: fields[0], id: fields[1] };
  }

  #mac(ownerId: string, payload: string): string {
    return createHmac('sha256', this.#secret).update(`${ownerId}\n${payload}`).digest('base64url').slice(0, 22);
  }
}
