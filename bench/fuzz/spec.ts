/**
 * What one fuzz case is, before it meets a live deployment: a `Spec` names the kind of input and the generated
 * parts; `materialize` (cases.ts) turns it into an HTTP request and the answer the gateway owes it. Specs are
 * plain data, so a failing case prints readably and shrinks.
 */

/** An HTTP method the fuzz sends. */
export type HttpMethod = 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH' | 'OPTIONS' | 'HEAD';

/** A message body: JSON text, or raw bytes (invalid UTF-8, say). */
export type Body = string | Uint8Array;

/** Which session a request names: the caller's, the other principal's, a new one, none, or a literal header. */
export type SessionRef = 'own' | 'foreign' | 'fresh' | 'none' | { readonly header: string };

/** A reference to a value of the live deployment: a real task id or cursor (index modulo the known ones). */
export interface RealRef {
  readonly real: number;
  /** For cursors: change the character at this position (modulo the length) to make a tampered one. */
  readonly tamper?: number;
}

/** The generated input, by kind. Every kind except `chaos` has one exact expected answer (see cases.ts). */
export type Spec =
  | { readonly kind: 'method'; readonly method: 'PUT' | 'PATCH' | 'OPTIONS' | 'HEAD' }
  | { readonly kind: 'host'; readonly method: HttpMethod; readonly host: string }
  | { readonly kind: 'origin'; readonly method: HttpMethod; readonly origin: string }
  | { readonly kind: 'auth'; readonly method: 'GET' | 'POST' | 'DELETE'; readonly authorization?: string | undefined }
  | { readonly kind: 'accept'; readonly method: 'GET' | 'POST'; readonly accept?: string | undefined }
  | { readonly kind: 'contentType'; readonly contentType?: string | undefined }
  | { readonly kind: 'unparsable'; readonly body: Body }
  | { readonly kind: 'notMessage'; readonly body: string }
  | { readonly kind: 'tooLarge'; readonly extra: number }
  | { readonly kind: 'hugeHeader'; readonly method: HttpMethod; readonly size: number }
  | {
      readonly kind: 'session';
      readonly method: 'GET' | 'POST' | 'DELETE';
      readonly session: 'none' | 'foreign' | { readonly header: string };
    }
  | { readonly kind: 'version'; readonly method: 'GET' | 'POST' | 'DELETE'; readonly version: string }
  | { readonly kind: 'unknownMethod'; readonly method: string; readonly id: string | number }
  | { readonly kind: 'badParams'; readonly method: string; readonly params: unknown; readonly id: string | number }
  | { readonly kind: 'call'; readonly call: RpcCall; readonly id: string | number }
  | { readonly kind: 'hugeNumber'; readonly where: 'id' | 'argument' | 'ttl' | 'progressToken'; readonly raw: string }
  | { readonly kind: 'notification'; readonly method: string; readonly params?: Record<string, unknown> | undefined }
  | { readonly kind: 'response'; readonly id: string | number; readonly error: boolean }
  | { readonly kind: 'get'; readonly lastEventId?: string | undefined }
  | { readonly kind: 'delete' }
  | { readonly kind: 'initialize'; readonly params: unknown; readonly withSession: boolean }
  | {
      readonly kind: 'chaos';
      readonly method: HttpMethod;
      readonly headers: Readonly<Record<string, string>>;
      readonly session: SessionRef;
      readonly body?: Body | undefined;
    };

/** A well-shaped request of a method the gateway answers, with the answers its values allow. */
export interface RpcCall {
  readonly method: string;
  /** Params; `{ $real: 'taskId' | 'cursor', ref }` members are replaced with live values. */
  readonly params?: Record<string, unknown>;
  /** What may come back: `result`, or one of these error codes (200, inside the JSON-RPC response). */
  readonly allow: { readonly result: boolean; readonly codes: readonly number[] };
}

/** The answer a case is owed. */
export interface Expectation {
  readonly status: readonly number[];
  /** The JSON-RPC error code; `result` when a result is allowed too. Absent: anything the catalogue allows. */
  readonly codes?: readonly number[];
  readonly result?: boolean;
  /** The id the response must carry (a JSON-RPC request's). */
  readonly id?: string | number;
}
