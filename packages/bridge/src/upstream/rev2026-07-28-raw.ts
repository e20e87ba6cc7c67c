import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type Transport,
} from '@modelcontextprotocol/client';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

/** The tasks extension of 2026-07-28. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

type Json = Record<string, unknown>;

interface Pending {
  resolve(result: Json): void;
  reject(error: unknown): void;
}

/**
 * JSON-RPC requests of the tasks extension sent on a v2 client's own transport: the SDK's codec refuses a
 * `resultType: "task"` result, so these requests (ids of their own, `taskgate-<n>`) and their answers bypass
 * it. Each carries the 2026-07-28 `_meta` envelope with the tasks extension declared (the opt-in is per request).
 */
export class RawRequests {
  readonly #transport: Transport;
  readonly #envelope: Json;
  readonly #pending = new Map<string, Pending>();
  #next = 0;

  constructor(transport: Transport, clientInfo: Json, capabilities: Json) {
    this.#transport = transport;
    this.#envelope = {
      [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
      [CLIENT_INFO_META_KEY]: clientInfo,
      [CLIENT_CAPABILITIES_META_KEY]: { ...capabilities, extensions: { [TASKS_EXTENSION]: {} } },
    };
    const forward = transport.onmessage;
    const onclose = transport.onclose;
    transport.onmessage = (message, extra) => {
      const { id } = message as { id?: unknown };
      const pending = typeof id === 'string' && !('method' in message) ? this.#pending.get(id) : undefined;
      if (pending === undefined) return forward?.call(transport, message, extra);
      this.#pending.delete(id as string);
      const { result, error } = message as { result?: Json; error?: { code: number; message: string; data?: unknown } };
      if (error !== undefined) pending.reject(new McpError(error.code, error.message, error.data));
      else pending.resolve(result ?? {});
    };
    transport.onclose = () => {
      for (const pending of this.#pending.values()) pending.reject(new Error('The connection closed'));
      this.#pending.clear();
      onclose?.call(transport);
    };
  }

  /** Sends `method` and resolves with its raw result; aborting `signal` gives up on the answer. */
  async request(method: string, params: Json, signal?: AbortSignal): Promise<Json> {
    signal?.throwIfAborted();
    this.#next += 1;
    const id = `taskgate-${this.#next}`;
    const meta = { ...this.#envelope, ...((params._meta as Json | undefined) ?? {}) };
    const answer = new Promise<Json>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      signal?.addEventListener(
        'abort',
        () => {
          if (!this.#pending.delete(id)) return;
          reject(signal.reason);
          this.notify('notifications/cancelled', { requestId: id, reason: String(signal.reason) }).catch(() => {});
        },
        { once: true },
      );
    });
    await this.#transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } } as never);
    return await answer;
  }

  /** Sends a notification with the envelope (`notifications/cancelled` of a raw request). */
  async notify(method: string, params: Json): Promise<void> {
    await this.#transport.send({ jsonrpc: '2.0', method, params: { ...params, _meta: this.#envelope } } as never);
  }
}
