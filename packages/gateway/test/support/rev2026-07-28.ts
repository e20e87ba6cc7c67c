/** A raw client of revision 2026-07-28: one POST per request, `_meta` and headers as the revision asks. */
export interface Rev2026Reply {
  readonly status: number;
  readonly body: {
    readonly id?: unknown;
    readonly result?: Record<string, unknown>;
    readonly error?: { code: number; message: string; data?: Record<string, unknown> };
  };
}

export const TASKS = 'io.modelcontextprotocol/tasks';

let nextId = 1;

/** Where `Mcp-Name` mirrors the body, per method. */
function nameOf(method: string, params: Record<string, unknown>): unknown {
  if (method === 'tools/call' || method === 'prompts/get') return params.name;
  if (method === 'resources/read') return params.uri;
  if (method.startsWith('tasks/')) return params.taskId;
  return undefined;
}

export interface Rev2026Options {
  readonly capabilities?: Record<string, unknown>;
  readonly headers?: Record<string, string>;
  readonly meta?: Record<string, unknown>;
  readonly token?: string;
}

/** Sends one request of revision 2026-07-28 and reads its JSON answer. */
export async function rev2026Request(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: Rev2026Options = {},
): Promise<Rev2026Reply> {
  const id = nextId++;
  const name = nameOf(method, params);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': method,
    ...(typeof name === 'string' && { 'Mcp-Name': name }),
    ...(options.token !== undefined && { Authorization: `Bearer ${options.token}` }),
    ...options.headers,
  };
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? {},
    'io.modelcontextprotocol/clientInfo': { name: 'rev2026-test', version: '1.0.0' },
    ...options.meta,
  };
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }),
  });
  const body = (await response.json()) as Rev2026Reply['body'];
  if (body.id !== id) throw new Error(`answer to request ${id} carries id ${String(body.id)}`);
  return { status: response.status, body };
}

/** Polls `tasks/get` until the task's status is one of `statuses`. */
export async function untilStatus(
  url: string,
  taskId: string,
  statuses: readonly string[],
  options: Rev2026Options = { capabilities: { extensions: { [TASKS]: {} } } },
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { body } = await rev2026Request(url, 'tasks/get', { taskId }, options);
    const result = body.result ?? {};
    if (statuses.includes(String(result.status))) return result;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stayed ${String(result.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
