import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
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

/** An open `subscriptions/listen` stream of raw requests. */
export interface RawListen {
  /** What of the filter the server agreed to send (its `notifications/subscriptions/acknowledged`). */
  readonly honoured: Json;
  /** Resolves when the stream ends: closed here, by the server, or with the connection. */
  readonly ended: Promise<void>;
  /** Ends the stream (the HTTP request is aborted and the server told with `notifications/cancelled`). */
  close(): Promise<void>;
}

interface Listening {
  acknowledged(honoured: Json): void;
  notified(method: string, params: Json): void;
  end(error?: unknown): void;
}

/** The listen stream a notification belongs to: its subscription id, or the request a `cancelled` ends (stdio). */
function subscriptionOf(method: string, params: Json): unknown {
  const tagged = ((params._meta ?? {}) as Json)[SUBSCRIPTION_ID_META_KEY];
  return tagged ?? (method === 'notifications/cancelled' ? params.requestId : undefined);
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
  readonly #listens = new Map<string, Listening>();
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
      if (this.#listened(message)) return;
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
      for (const listening of [...this.#listens.values()]) listening.end(new Error('The connection closed'));
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
    // The connection may close while the request is still being sent: the answer's rejection is taken below.
    answer.catch(() => {});
    try {
      await this.#transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } } as never);
    } catch (error) {
      this.#pending.delete(id);
      throw error;
    }
    return await answer;
  }

  /** Sends a notification with the envelope (`notifications/cancelled` of a raw request). */
  async notify(method: string, params: Json): Promise<void> {
    await this.#transport.send({ jsonrpc: '2.0', method, params: { ...params, _meta: this.#envelope } } as never);
  }

  /**
   * Opens a `subscriptions/listen` stream with `filter` (the tasks extension declared, so `taskIds` may be
   * honoured); resolves with what the server acknowledged. Each notification of the stream goes to `notified`,
   * not to the SDK. Rejects when the server refuses the request, does not acknowledge it in `timeoutMs`, or
   * `signal` aborts first.
   */
  async listen(
    filter: Json,
    notified: (method: string, params: Json) => void,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<RawListen> {
    signal?.throwIfAborted();
    this.#next += 1;
    const id = `taskgate-listen-${this.#next}`;
    const abort = new AbortController();
    let endStream: () => void = () => {};
    const ended = new Promise<void>((resolve) => {
      endStream = resolve;
    });
    let timer: NodeJS.Timeout | undefined;
    const close = async (): Promise<void> => {
      if (!this.#listens.has(id)) return;
      this.#listens.get(id)?.end();
      await this.notify('notifications/cancelled', { requestId: id }).catch(() => {});
    };
    const honoured = new Promise<Json>((resolve, reject) => {
      this.#listens.set(id, {
        acknowledged: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        notified,
        end: (error) => {
          if (!this.#listens.delete(id)) return;
          clearTimeout(timer);
          abort.abort();
          reject(error ?? new Error('subscriptions/listen ended before the server acknowledged it'));
          endStream();
        },
      });
      timer = setTimeout(() => {
        reject(new Error(`subscriptions/listen was not acknowledged within ${timeoutMs} ms`));
        void close();
      }, timeoutMs);
    });
    const aborted = (): void => {
      this.#listens.get(id)?.end(signal?.reason);
      void this.notify('notifications/cancelled', { requestId: id }).catch(() => {});
    };
    signal?.addEventListener('abort', aborted, { once: true });
    void honoured.then(
      () => signal?.removeEventListener('abort', aborted),
      () => signal?.removeEventListener('abort', aborted),
    );
    const end = (error?: unknown) => this.#listens.get(id)?.end(error);
    const meta = this.#envelope;
    const request = {
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { notifications: filter, _meta: meta },
    };
    this.#transport
      .send(request as never, {
        requestSignal: abort.signal,
        onRequestStreamEnd: () => end(new Error('subscriptions/listen: the stream ended')),
      })
      .catch(end);
    return { honoured: await honoured, ended, close };
  }

  /** Whether `message` belongs to a listen stream of these requests (and was handled). */
  #listened(message: object): boolean {
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method !== 'string') {
      const listening = typeof id === 'string' ? this.#listens.get(id) : undefined;
      if (listening === undefined) return false;
      // The stream's response: its end (a result), or the server's refusal (an error).
      const { error } = message as { error?: { code: number; message: string; data?: unknown } };
      listening.end(error === undefined ? undefined : new McpError(error.code, error.message, error.data));
      return true;
    }
    const params = ((message as { params?: Json }).params ?? {}) as Json;
    const subscription = subscriptionOf(method, params);
    const listening = typeof subscription === 'string' ? this.#listens.get(subscription) : undefined;
    if (listening === undefined) return false;
    if (method === 'notifications/subscriptions/acknowledged') {
      listening.acknowledged((params.notifications ?? {}) as Json);
    } else if (method === 'notifications/cancelled') {
      listening.end(new Error('the server ended the subscriptions/listen stream'));
    } else {
      listening.notified(method, params);
    }
    return true;
  }
}
