/**
 * The partition run's 2026-07-28 requests (stateless, the tasks extension): a task created with `tools/call`,
 * read with `tasks/get` (its result inlined once completed), answered with `tasks/update` and cancelled with
 * `tasks/cancel` (acknowledged whatever the task's state). Each answer is read into what the history records.
 */
import { exchange, type Message, responseTo } from '../rpc.js';
import type { Op, OpKind, TaskStatus } from './history.js';
import { ANSWER_KEY, ANSWER_WORD } from './tools.js';

const VERSION = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const STATUSES = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);

/** What one 2026-07-28 request brought: its HTTP status and the response to it. */
export interface Rev2026Sent {
  readonly answer: { readonly status: number; readonly complete: boolean };
  readonly response: Message | undefined;
}

/** Sends one 2026-07-28 request, with the headers and `_meta` the revision asks for. */
export async function rev2026Post(
  url: string,
  token: string,
  method: string,
  params: Record<string, unknown>,
  ms: number,
): Promise<Rev2026Sent> {
  const name = method === 'tools/call' ? params.name : params.taskId;
  const meta = {
    'io.modelcontextprotocol/protocolVersion': VERSION,
    'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [TASKS]: {} } },
  };
  const answer = await exchange(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`,
      'MCP-Protocol-Version': VERSION,
      'Mcp-Method': method,
      ...(typeof name === 'string' && { 'Mcp-Name': name }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }),
    signal: AbortSignal.timeout(ms),
  });
  return { answer, response: responseTo(answer.messages, 1) };
}

/** The answer every client gives a `part_ask` task's question. */
export const rev2026Answer = (): Record<string, unknown> => ({
  [ANSWER_KEY]: { action: 'accept', content: { [ANSWER_KEY]: ANSWER_WORD } },
});

/**
 * A request of either revision that brought no usable answer: refused for sure (`fail`), or ambiguous (`info`):
 * no answer, or a server error after which the request may have been applied.
 */
export function failure(sent: Rev2026Sent, mayHaveActed: boolean): Pick<Op, 'outcome' | 'error'> {
  const { answer, response } = sent;
  const error =
    response?.error !== undefined
      ? `error ${response.error.code}: ${response.error.message.slice(0, 120)}`
      : answer.status === 0
        ? 'no answer'
        : `HTTP ${answer.status}`;
  const refused = answer.status !== 0 && (answer.status < 500 || !mayHaveActed) && response?.error?.code !== -32603;
  return { outcome: refused ? 'fail' : 'info', error };
}

/** What a 2026-07-28 create saw: the task's id, or why there is none. */
export function rev2026Created(sent: Rev2026Sent): Pick<Op, 'outcome' | 'taskId' | 'status' | 'error'> {
  const result = sent.response?.result;
  if (result?.resultType === 'task' && typeof result.taskId === 'string') {
    const status = STATUSES.has(String(result.status)) ? (result.status as TaskStatus) : 'working';
    return { outcome: 'ok', taskId: result.taskId, status };
  }
  return failure(sent, true);
}

/**
 * What `tasks/get`, `tasks/update` and `tasks/cancel` saw of their task. A get of a completed task carries the
 * tool's text; an update or a cancel is acknowledged without a status (`refused` stays unset: a 2026-07-28
 * cancel of a finished task is acknowledged too, CNL-1 holds on 2025-11-25 only).
 */
export function rev2026Read(kind: OpKind, sent: Rev2026Sent): Pick<Op, 'outcome' | 'status' | 'text' | 'error'> {
  const { response } = sent;
  const result = response?.result;
  if (result !== undefined) {
    if (kind !== 'get') return { outcome: 'ok' };
    if (!STATUSES.has(String(result.status))) return { outcome: 'info', error: 'no status' };
    const inlined = result.result as
      | { content?: Array<{ type?: string; text?: string }>; isError?: unknown }
      | undefined;
    // A tool error is `completed` with an `isError` result on this revision, `failed` on 2025-11-25: one status.
    if (result.status === 'completed' && inlined?.isError === true) return { outcome: 'ok', status: 'failed' };
    const status = result.status as TaskStatus;
    const text = inlined?.content?.find((part) => part.type === 'text')?.text;
    return { outcome: 'ok', status, ...(status === 'completed' && text !== undefined && { text }) };
  }
  if (response?.error?.code === -32602 && /not found/i.test(response.error.message)) {
    return { outcome: 'ok', status: 'unknown' };
  }
  return failure(sent, kind !== 'get');
}
