/**
 * Raw MCP over HTTP for the chaos clients: JSON-RPC POSTs whose answer is JSON or SSE, SSE streams read event by
 * event, resumption with `Last-Event-ID`, and retries of what is safe to send again.
 */

export type Message = {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** Why a request is sent again: a status (503, 502 …) or a network error (reset, refused, timeout). */
export type RetryReason = string;

/** What one HTTP exchange gave: its status, the messages it carried, and the id of its last SSE event. */
export interface Exchange {
  readonly status: number;
  readonly sessionId: string | undefined;
  readonly messages: Message[];
  readonly lastEventId: string | undefined;
  /** The body ended normally (false: the connection dropped, or the exchange was aborted). */
  readonly complete: boolean;
}

const PROTOCOL = '2025-11-25';

export function headers(sessionId: string | undefined, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': PROTOCOL,
    ...(sessionId !== undefined && { 'Mcp-Session-Id': sessionId }),
    ...extra,
  };
}

/** Parses the SSE blocks of `text`; returns the events and what is left of an unfinished block. */
function parseSse(text: string): { events: Array<{ id?: string; data: string }>; rest: string } {
  const events: Array<{ id?: string; data: string }> = [];
  let rest = text;
  for (let end = rest.indexOf('\n\n'); end >= 0; end = rest.indexOf('\n\n')) {
    const block = rest.slice(0, end);
    rest = rest.slice(end + 2);
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (id !== undefined || data.length > 0) events.push({ ...(id !== undefined && { id }), data: data.join('\n') });
  }
  return { events, rest };
}

/**
 * One HTTP request; `onMessage` sees each JSON-RPC message as it arrives (SSE) or once the body is read (JSON).
 * Never throws for a dropped connection: the exchange is then `complete: false` (status 0 when no answer came).
 */
export async function exchange(
  url: string,
  init: { method: 'POST' | 'GET'; headers: Record<string, string>; body?: string; signal: AbortSignal },
  onMessage: (message: Message) => void = () => {},
): Promise<Exchange> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch {
    return { status: 0, sessionId: undefined, messages: [], lastEventId: undefined, complete: false };
  }
  const sessionId = response.headers.get('mcp-session-id') ?? undefined;
  const messages: Message[] = [];
  const take = (data: string): void => {
    if (data === '') return;
    try {
      const message = JSON.parse(data) as Message;
      messages.push(message);
      onMessage(message);
    } catch {
      // Not JSON-RPC (an empty 202 body, an HTML error page of the load balancer): nothing to take.
    }
  };
  let lastEventId: string | undefined;
  const sse = (response.headers.get('content-type') ?? '').includes('text/event-stream');
  try {
    if (!sse || response.body === null) {
      const text = await response.text();
      if (text !== '') take(text);
      return { status: response.status, sessionId, messages, lastEventId, complete: true };
    }
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      const parsed = parseSse(buffer);
      buffer = parsed.rest;
      for (const event of parsed.events) {
        if (event.id !== undefined && event.id !== '') lastEventId = event.id;
        take(event.data);
      }
    }
    return { status: response.status, sessionId, messages, lastEventId, complete: true };
  } catch {
    return { status: response.status, sessionId, messages, lastEventId, complete: false };
  }
}

/**
 * A status or network failure worth retrying: 0 (no answer), 429, 500 (a gateway whose Redis call failed),
 * 502, 503, 504. Every request the clients retry is safe to send again (an answer to an elicitation too: the
 * first one wins), or creates a new task (tools/call) that is counted on its own.
 */
export const retryable = (status: number): boolean =>
  status === 0 || status === 429 || status === 500 || status === 502 || status === 503 || status === 504;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends a POST until an answer that is not a retryable failure arrives (or `until` passes): same body each
 * time. `onRetry` is told each retry's reason. Returns the last exchange.
 */
export async function postWithRetry(
  url: string,
  sessionId: string | undefined,
  message: Message,
  options: {
    until: number;
    timeoutMs: number;
    onRetry: (reason: RetryReason) => void;
    onMessage?: (m: Message) => void;
  },
): Promise<Exchange> {
  let delay = 50;
  for (;;) {
    const result = await exchange(
      url,
      {
        method: 'POST',
        headers: headers(sessionId),
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(options.timeoutMs),
      },
      options.onMessage,
    );
    const failed = retryable(result.status) || (!result.complete && result.messages.length === 0);
    if (!failed || Date.now() > options.until) return result;
    options.onRetry(result.status === 0 ? 'no answer' : `HTTP ${result.status}`);
    await sleep(delay);
    delay = Math.min(1000, delay * 2);
  }
}

/** The JSON-RPC response to `id` among `messages`. */
export const responseTo = (messages: readonly Message[], id: string | number): Message | undefined =>
  messages.find((message) => message.id === id && message.method === undefined);
