/**
 * The partition run's clients: lanes that each hold a 2025-11-25 session on one gateway (reached straight over
 * the bridge, so a gateway cut from Redis still gets requests) and do one operation at a time — create a task,
 * `tasks/get`, `tasks/list`, `tasks/cancel`, `tasks/result` — on the tasks of their principal, which the lanes of
 * that principal share. Every fourth lane speaks revision 2026-07-28 instead (stateless: create, `tasks/get`,
 * `tasks/update` answering a `part_ask` question it has read, `tasks/cancel`) on the same tasks. Every operation goes to the
 * history with what it saw; nothing is retried (a new operation is a new entry), so an answer that never came is
 * recorded as ambiguous.
 */
import { seededRandom } from '../config.js';
import { exchange, headers, type Message, responseTo, sleep } from '../rpc.js';
import { failure, rev2026Answer, rev2026Created, rev2026Post, rev2026Read } from './client-rev2026.js';
import type { HistoryWriter, Op, OpKind, SeenStatus, TaskStatus } from './history.js';
import { ANSWER_WORD, echoOf } from './tools.js';

export interface ClientPlan {
  readonly urls: readonly string[];
  readonly tokens: readonly string[];
  readonly lanes: number;
  readonly seed: number;
  readonly history: HistoryWriter;
  /** No operation starts after this (ms since epoch). */
  readonly until: number;
}

const TIMEOUT_MS = 3000;
const RESULT_TIMEOUT_MS = 5000;
const MIX: ReadonlyArray<[OpKind, number]> = [
  ['create', 0.3],
  ['get', 0.3],
  ['list', 0.12],
  ['cancel', 0.1],
  ['result', 0.18],
];
const MIX_2026: ReadonlyArray<[OpKind, number]> = [
  ['create', 0.3],
  ['get', 0.35],
  ['update', 0.2],
  ['cancel', 0.15],
];
/** The questions (part_ask tasks) a 2026-07-28 lane leaves unanswered at most at once. */
const ASKING_MAX = 8;
const STATUSES = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

interface Known {
  readonly taskId: string;
  readonly tool: string;
  readonly expect: string;
}

/** The tasks a principal's lanes know (the latest 40). */
type Pool = Known[];

function pick(draw: number, mix = MIX): OpKind {
  let left = draw;
  for (const [kind, weight] of mix) {
    left -= weight;
    if (left < 0) return kind;
  }
  return 'get';
}

const statusOf = (value: unknown): TaskStatus | undefined =>
  typeof value === 'string' && STATUSES.has(value) ? (value as TaskStatus) : undefined;

/** Runs every lane until `plan.until`. */
export async function runClients(plan: ClientPlan): Promise<void> {
  const pools: Pool[] = plan.tokens.map(() => []);
  let value = 0;
  const lane = async (index: number): Promise<void> => {
    if (index % 4 === 3) return rev2026Lane(plan, index, pools[index % plan.tokens.length] as Pool, () => value++);
    const random = seededRandom(plan.seed * 104_729 + index);
    const gateway = index % plan.urls.length;
    const url = plan.urls[gateway] as string;
    const principal = index % plan.tokens.length;
    const auth = { Authorization: `Bearer ${plan.tokens[principal]}` };
    const pool = pools[principal] as Pool;
    const laneName = `lane-${index}`;
    let session: string | undefined;
    let rpc = 1;
    const post = (sessionId: string | undefined, method: string, params: Record<string, unknown>, ms: number) => {
      const id = rpc++;
      return exchange(url, {
        method: 'POST',
        headers: headers(sessionId, auth),
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
        signal: AbortSignal.timeout(ms),
      }).then((answer) => ({ answer, response: responseTo(answer.messages, id) }));
    };
    while (Date.now() < plan.until) {
      if (session === undefined) {
        const init = await post(
          undefined,
          'initialize',
          { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'partitions', version: '1' } },
          TIMEOUT_MS,
        );
        session = init.answer.status === 200 ? init.answer.sessionId : undefined;
        if (session === undefined) {
          await sleep(200 + Math.floor(random() * 300));
          continue;
        }
        await exchange(url, {
          method: 'POST',
          headers: headers(session, auth),
          body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      }
      const target = pool[Math.floor(random() * pool.length)];
      const drawn: OpKind = pool.length === 0 ? 'create' : pick(random());
      // A task that asks for input is read, not awaited, here: this client answers no question.
      const kind = drawn === 'result' && target?.tool === 'part_ask' ? 'get' : drawn;
      const invoke = plan.history.now();
      let op: Omit<Op, 'invoke' | 'complete' | 'process' | 'gateway'>;
      let sent: Awaited<ReturnType<typeof post>>;
      if (kind === 'create') {
        const n = value++;
        const tool = random() < 0.5 ? 'part_echo' : 'part_once';
        const args = { value: n, ms: 100 + Math.floor(random() * 1500) };
        sent = await post(session, 'tools/call', { name: tool, arguments: args, task: {} }, TIMEOUT_MS);
        const task = sent.response?.result?.task as { taskId?: string; status?: unknown } | undefined;
        const expect = echoOf(n);
        if (typeof task?.taskId === 'string') {
          op = { kind, outcome: 'ok', taskId: task.taskId, tool, expect, status: statusOf(task.status) ?? 'working' };
          pool.push({ taskId: task.taskId, tool, expect });
          if (pool.length > 40) pool.shift();
        } else op = { kind, tool, expect, ...failure(sent, true) };
      } else if (kind === 'list') {
        sent = await post(session, 'tasks/list', {}, TIMEOUT_MS);
        const tasks = sent.response?.result?.tasks;
        if (Array.isArray(tasks)) {
          const seen = (tasks as Array<{ taskId?: unknown; status?: unknown }>).flatMap((task) => {
            const status = statusOf(task.status);
            return typeof task.taskId === 'string' && status !== undefined ? [{ taskId: task.taskId, status }] : [];
          });
          op = { kind, outcome: 'ok', seen };
        } else op = { kind, ...failure(sent, false) };
      } else {
        const taskId = (target as Known).taskId;
        const method = `tasks/${kind}`;
        sent = await post(session, method, { taskId }, kind === 'result' ? RESULT_TIMEOUT_MS : TIMEOUT_MS);
        op = { kind, taskId, ...readOf(kind, sent.response, sent.answer.status) };
      }
      if (sent.answer.status === 404 && sent.response?.error === undefined) session = undefined;
      plan.history.record({ ...op, process: laneName, gateway, invoke, complete: plan.history.now() } as Op);
      if (op.outcome !== 'ok') await sleep(50 + Math.floor(random() * 150));
    }
  };
  await Promise.all(Array.from({ length: plan.lanes }, (_, index) => lane(index)));
}

/** A 2026-07-28 lane: stateless requests on the pool its principal shares with the 2025-11-25 lanes. */
async function rev2026Lane(plan: ClientPlan, index: number, pool: Pool, nextValue: () => number): Promise<void> {
  const random = seededRandom(plan.seed * 104_729 + index);
  const gateway = index % plan.urls.length;
  const url = plan.urls[gateway] as string;
  const token = plan.tokens[index % plan.tokens.length] as string;
  // This lane's part_ask tasks: `asked` not yet seen asking (read again in turn), `questions` seen asking and not
  // answered yet (an update answers the oldest). A lane has at most ASKING_MAX of them at once: a question
  // holds a worker's slot until it is answered, and a client answers only what it was asked.
  const asked: Known[] = [];
  const questions: Known[] = [];
  while (Date.now() < plan.until) {
    const drawnTarget = pool[Math.floor(random() * pool.length)];
    const kind: OpKind = drawnTarget === undefined ? 'create' : pick(random(), MIX_2026);
    const readsAsked = kind === 'get' && asked.length > 0 && random() < 0.5;
    const target = (kind === 'update' ? questions.shift() : readsAsked ? asked.shift() : undefined) ?? drawnTarget;
    const invoke = plan.history.now();
    let op: Omit<Op, 'invoke' | 'complete' | 'process' | 'gateway'>;
    if (kind === 'create' || target === undefined) {
      const n = nextValue();
      const tool = random() < 0.5 && asked.length + questions.length < ASKING_MAX ? 'part_ask' : 'part_echo';
      const args = { value: n, ms: 100 + Math.floor(random() * 1500) };
      const seen = rev2026Created(
        await rev2026Post(url, token, 'tools/call', { name: tool, arguments: args }, TIMEOUT_MS),
      );
      const expect = tool === 'part_ask' ? `${echoOf(n)} ${ANSWER_WORD}` : echoOf(n);
      op = { kind: 'create', tool, expect, ...seen };
      if (seen.taskId !== undefined) {
        const known = { taskId: seen.taskId, tool, expect };
        pool.push(known);
        if (pool.length > 40) pool.shift();
        if (tool === 'part_ask') asked.push(known);
      }
    } else {
      const taskId = target.taskId;
      const params = kind === 'update' ? { taskId, inputResponses: rev2026Answer() } : { taskId };
      op = { kind, taskId, ...rev2026Read(kind, await rev2026Post(url, token, `tasks/${kind}`, params, TIMEOUT_MS)) };
      if (readsAsked) {
        if (op.status === 'input_required') questions.push(target);
        else if (op.status === undefined || !TERMINAL.has(op.status)) asked.push(target);
      }
    }
    plan.history.record({
      ...op,
      rev2026: true,
      process: `lane-${index}`,
      gateway,
      invoke,
      complete: plan.history.now(),
    } as Op);
    if (op.outcome !== 'ok') await sleep(50 + Math.floor(random() * 150));
  }
}

/** What get, cancel and result saw of their task. */
function readOf(
  kind: OpKind,
  response: Message | undefined,
  http: number,
): Pick<Op, 'outcome' | 'status' | 'text' | 'error' | 'refused'> {
  const sent = { answer: { status: http, complete: true }, response };
  const result = response?.result;
  const error = response?.error;
  if (result !== undefined) {
    if (kind === 'result') {
      const content = result.content as Array<{ type?: string; text?: string }> | undefined;
      const text = content?.find((part) => part.type === 'text')?.text;
      if (result.isError === true) return { outcome: 'ok', status: 'failed' };
      return text === undefined ? { outcome: 'info', error: 'no text' } : { outcome: 'ok', status: 'completed', text };
    }
    const status = statusOf(result.status);
    return status === undefined ? { outcome: 'info', error: 'no status' } : { outcome: 'ok', status };
  }
  if (error !== undefined && error.code === -32602) {
    if (/not found/i.test(error.message)) return { outcome: 'ok', status: 'unknown' as SeenStatus };
    const terminal = statusOf(/terminal status '(\w+)'/.exec(error.message)?.[1]);
    if (kind === 'cancel' && terminal !== undefined) return { outcome: 'ok', status: terminal, refused: true };
  }
  const ended = statusOf((error?.data as { status?: unknown } | undefined)?.status);
  if (kind === 'result' && http === 200 && ended !== undefined) return { outcome: 'ok', status: ended };
  return failure(sent, kind === 'cancel');
}
