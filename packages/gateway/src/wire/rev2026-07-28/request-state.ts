import { createHmac, timingSafeEqual } from 'node:crypto';
import { ProtocolError } from '@taskgate/protocol';

/** Longest `requestState` issued or accepted (a read's carries its answers so far). */
const MAX_STATE_LENGTH = 65_536;

/** What a `requestState` carries between the rounds of one multi-round-trip request. */
export interface RequestState {
  /** A tool call's record, whose input requests the next round answers. */
  readonly taskId?: string;
  /** A read's answers so far, by input request key (a read keeps no record between rounds). */
  readonly answers?: Readonly<Record<string, unknown>>;
  /** Digest of the owner (`Keys.ownerId`): a state is valid only for the owner it was issued to. */
  readonly ownerId: string;
  /** What the state belongs to: the tool's name, or a read's method and the digest of its params. */
  readonly tool: string;
  /** ms since the epoch after which the state is refused. */
  readonly expiresAt: number;
}

/**
 * Signs and checks `requestState` (2026-07-28 multi-round-trip input): base64url JSON, a dot, and an
 * HMAC-SHA256 of that JSON under the deployment's request-state secret. Any gateway with the same secret
 * accepts a state another issued; a state that was altered, expired or issued to another owner is -32602.
 */
export class RequestStateCodec {
  readonly #secret: Buffer;

  constructor(secret: string | Uint8Array) {
    this.#secret = Buffer.from(secret);
  }

  encode(state: RequestState): string {
    const body = Buffer.from(JSON.stringify(state)).toString('base64url');
    const value = `${body}.${this.#mac(body)}`;
    if (value.length > MAX_STATE_LENGTH) {
      throw ProtocolError.invalidParams('Invalid params: the answers of this request are too large to carry on');
    }
    return value;
  }

  /** The state `value` carries; `ownerId` undefined (auth off) accepts any owner: the signature binds the state. */
  decode(value: unknown, ownerId: string | undefined, tool: string, now = Date.now()): RequestState {
    const invalid = (why: string): ProtocolError => ProtocolError.invalidParams(`Invalid params: requestState ${why}`);
    if (typeof value !== 'string' || value.length > MAX_STATE_LENGTH)
      throw invalid('must be a string issued by this server');
    const [body, mac, extra] = value.split('.');
    if (body === undefined || mac === undefined || extra !== undefined) throw invalid('is malformed');
    const expected = Buffer.from(this.#mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given))
      throw invalid('was not issued by this server');
    let state: RequestState;
    try {
      state = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as RequestState;
    } catch {
      throw invalid('is malformed');
    }
    if ((ownerId !== undefined && state.ownerId !== ownerId) || state.tool !== tool)
      throw invalid('belongs to another request');
    if (!(state.expiresAt > now)) throw invalid('has expired');
    return state;
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#secret).update('requestState.').update(body).digest('base64url');
  }
}
