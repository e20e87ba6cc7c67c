/**
 * The chaos run's client load: sessions through the load balancer, each creating tasks of mixed tools one after
 * another and following each to its end — result streams resumed with `Last-Event-ID` when they drop,
 * elicitations answered, some tasks cancelled half-way. Only what is safe to send again is retried as is; a
 * `tools/call` that got no answer is sent again too (it may create a second task: only tasks whose
 * CreateTaskResult arrived count as acknowledged).
 */
import { seededRandom } from './config.js';
import { exchange, headers, type Message, postWithRetry, responseTo, retryable, sleep } from './rpc.js';
import { ChaosSession, type TaskInbox } from './session.js';

export type TaskKind = 'short' | 'long' | 'progress' | 'ask' | 'cancel';
export const TASK_KINDS: readonly TaskKind[] = ['short', 'long', 'progress', 'ask', 'cancel'];
const MIX: ReadonlyArray<[TaskKind, number]> = [
  ['short', 0.4],
  ['long', 0.15],
  ['progress', 0.2],
  ['ask', 0.15],
  ['cancel', 0.1],
];
export const PROGRESS_STEPS = 5;

/** One acknowledged task, as its client saw it. */
export interface TaskRecord {
  readonly taskId: string;
  readonly sessionId: string;
  readonly kind: TaskKind;
  readonly phase: 'warmup' | 'faults';
  /** When the create request that was acknowledged went out. */
  readonly createdAt: number;
  /** When `tasks/result` answered (the response: result or error). */
  resultAt?: number;
  response?: Message;
  /** What the session's streams delivered for it: progress receipts, elicitations and answers. */
  readonly inbox: TaskInbox;
  /** Streams resumed with Last-Event-ID, and result streams opened again from the start. */
  resumes: number;
  restarts: number;
  cancelAnswer?: string;
  /** What the client's last exchange of `tasks/result` ended with, when no response came. */
  lastTry?: string;
  /** The first exchanges of `tasks/result` and its resumptions that gave no response (at most 12). */
  readonly tries: string[];
}

/** What the whole load saw. */
export interface LoadStats {
  readonly tasks: TaskRecord[];
  /** Retries by reason (`tools/call: HTTP 503`, `tasks/result: no answer`, …). */
  readonly retries: Map<string, number>;
  /** tools/call requests given up on without a CreateTaskResult, by the last answer seen. */
  readonly unacknowledged: Map<string, number>;
  sessionsLost: number;
  elicitationsAnswered: number;
  /** Session GET streams opened, and resumed with Last-Event-ID. */
  getOpened: number;
  getResumed: number;
}

export interface LoadPlan {
  readonly url: string;
  readonly sessions: number;
  readonly lanes: number;
  readonly seed: number;
  /** Phase of tasks created now. */
  readonly phase: () => 'warmup' | 'faults';
  /** No new task after this (ms since epoch). */
  readonly createUntil: number;
  /** Following results stops here. */
  readonly settleUntil: number;
  readonly maxTasks: number;
}

const REQUEST_TIMEOUT_MS = 10_000;
const STREAM_TIMEOUT_MS = 30_000;

const bump = (map: Map<string, number>, key: string): void => void map.set(key, (map.get(key) ?? 0) + 1);

/** Runs the load to `createUntil`, then follows every task still in flight to `settleUntil`. */
export async function runLoad(plan: LoadPlan): Promise<LoadStats> {
  const stats: LoadStats = {
    tasks: [],
    retries: new Map(),
    unacknowledged: new Map(),
    sessionsLost: 0,
    elicitationsAnswered: 0,
    getOpened: 0,
    getResumed: 0,
  };
  await Promise.all(Array.from({ length: plan.sessions }, (_, s) => runSession(plan, stats, s)));
  return stats;
}

async function runSession(plan: LoadPlan, stats: LoadStats, index: number): Promise<void> {
  const random = seededRandom(plan.seed * 7919 + index);
  const session = new ChaosSession({
    url: plan.url,
    settleUntil: plan.settleUntil,
    bump: (what) => bump(stats.retries, what),
    answered: () => {
      stats.elicitationsAnswered += 1;
    },
  });
  let rpcId = 1;
  const lane = async (): Promise<void> => {
    while (Date.now() < plan.createUntil && stats.tasks.length < plan.maxTasks) {
      if (session.id === undefined) return;
      const kind = pickKind(random());
      const outcome = await runTask(plan, stats, session, kind, random, () => rpcId++);
      if (outcome === 'session lost') {
        stats.sessionsLost += 1;
        await session.initialize();
      }
    }
  };
  if (await session.initialize()) await Promise.all(Array.from({ length: plan.lanes }, lane));
  await session.close();
  stats.getOpened += session.getOpened;
  stats.getResumed += session.getResumed;
}

/** The kind whose share of MIX holds `draw` (0..1). */
function pickKind(draw: number): TaskKind {
  let left = draw;
  for (const [kind, weight] of MIX) {
    left -= weight;
    if (left < 0) return kind;
  }
  return 'short';
}

function callParams(kind: TaskKind, random: () => number): Record<string, unknown> {
  switch (kind) {
    case 'short':
      return { name: 'chaos_short', arguments: {} };
    case 'long':
      return { name: 'chaos_long', arguments: { ms: 300 + Math.floor(random() * 1000) } };
    case 'progress':
      return { name: 'chaos_progress', arguments: { steps: PROGRESS_STEPS, ms: 100 } };
    case 'ask':
      return { name: 'chaos_ask', arguments: {} };
    case 'cancel':
      return { name: 'chaos_long', arguments: { ms: 60_000 } };
  }
}

async function runTask(
  plan: LoadPlan,
  stats: LoadStats,
  session: ChaosSession,
  kind: TaskKind,
  random: () => number,
  nextId: () => number,
): Promise<'done' | 'session lost'> {
  const sessionId = session.id as string;
  const call = callParams(kind, random);
  const phase = plan.phase();
  let createdAt = Date.now();
  let created: Message | undefined;
  let inbox: TaskInbox | undefined;
  let lastSeen = 'no answer';
  for (let delay = 50; Date.now() < plan.createUntil; delay = Math.min(1000, delay * 2)) {
    createdAt = Date.now();
    const id = nextId();
    // A token of its own for each attempt: an attempt whose answer was lost may still have created a task,
    // whose progress must not count as this one's.
    const progressToken = `p${id}`;
    inbox = session.inbox(progressToken);
    const params = { ...call, ...(kind === 'progress' && { _meta: { progressToken } }), task: {} };
    const answer = await exchange(plan.url, {
      method: 'POST',
      headers: headers(sessionId),
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const response = responseTo(answer.messages, id);
    const task = response?.result?.task as { taskId?: string } | undefined;
    if (typeof task?.taskId === 'string') {
      created = response;
      break;
    }
    if (answer.status === 404) return 'session lost';
    lastSeen =
      response?.error !== undefined
        ? `error ${response.error.code}`
        : answer.status === 0
          ? 'no answer'
          : `HTTP ${answer.status}`;
    if (!retryable(answer.status) && response?.error?.code !== -32603) break;
    bump(stats.retries, `tools/call: ${lastSeen}`);
    await sleep(delay);
  }
  const taskId = (created?.result?.task as { taskId?: string } | undefined)?.taskId;
  if (taskId === undefined || inbox === undefined) {
    bump(stats.unacknowledged, lastSeen);
    return 'done';
  }
  const record: TaskRecord = {
    taskId,
    sessionId,
    kind,
    phase,
    createdAt,
    inbox,
    resumes: 0,
    restarts: 0,
    tries: [],
  };
  session.acknowledged(taskId, inbox);
  stats.tasks.push(record);
  if (kind === 'cancel') {
    await sleep(200 + Math.floor(random() * 600));
    const answer = await postWithRetry(
      plan.url,
      sessionId,
      { jsonrpc: '2.0', id: nextId(), method: 'tasks/cancel', params: { taskId } },
      {
        until: plan.settleUntil,
        timeoutMs: REQUEST_TIMEOUT_MS,
        onRetry: (why) => bump(stats.retries, `tasks/cancel: ${why}`),
      },
    );
    const response = answer.messages[0];
    record.cancelAnswer =
      response?.error !== undefined
        ? `error ${response.error.code}`
        : String(response?.result?.status ?? answer.status);
    return 'done';
  }
  await followResult(plan, stats, record, session.take, nextId);
  return 'done';
}

/** Reads `tasks/result` to its response: resumes a dropped stream with Last-Event-ID, answers elicitations. */
async function followResult(
  plan: LoadPlan,
  stats: LoadStats,
  record: TaskRecord,
  onMessage: (message: Message) => void,
  nextId: () => number,
): Promise<void> {
  let lastEventId: string | undefined;
  let rpcId = nextId();
  // -32603 is a gateway's answer while its Redis calls fail, and also the stored outcome of a task that
  // failed so (e.g. it could not be queued): the same answer for 5 s running is the task's.
  let internalSince: number | undefined;
  for (let delay = 50; Date.now() < plan.settleUntil; delay = Math.min(1000, delay * 2)) {
    const resuming = lastEventId !== undefined;
    if (resuming) record.resumes += 1;
    else rpcId = nextId();
    const result = await exchange(
      plan.url,
      resuming
        ? {
            method: 'GET',
            headers: {
              ...headers(record.sessionId, { 'Last-Event-ID': lastEventId as string }),
              Accept: 'text/event-stream',
            },
            signal: AbortSignal.timeout(STREAM_TIMEOUT_MS),
          }
        : {
            method: 'POST',
            headers: headers(record.sessionId),
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: rpcId,
              method: 'tasks/result',
              params: { taskId: record.taskId },
            }),
            signal: AbortSignal.timeout(STREAM_TIMEOUT_MS),
          },
      onMessage,
    );
    const response = responseTo(result.messages, rpcId);
    internalSince = response?.error?.code === -32603 ? (internalSince ?? Date.now()) : undefined;
    if (response !== undefined && (response.error?.code !== -32603 || Date.now() - (internalSince ?? 0) >= 5000)) {
      record.response = response;
      record.resultAt = Date.now();
      break;
    }
    const why = response !== undefined ? 'error -32603' : result.status === 0 ? 'no answer' : `HTTP ${result.status}`;
    record.lastTry = `${resuming ? 'resume' : 'tasks/result'}: ${why}${result.complete ? '' : ' (dropped)'}`;
    bump(stats.retries, record.lastTry);
    if (record.tries.length < 12) record.tries.push(`${record.lastTry} @${Date.now() - record.createdAt} ms`);
    if (result.lastEventId !== undefined) lastEventId = result.lastEventId;
    else if (resuming && !retryable(result.status) && result.status !== 200) {
      // The stream cannot be resumed (204: it has ended; 400/410: unknown or expired event id): ask for the
      // result again. A resumption that answered 200 and then dropped before its first event is resumed from
      // the same id again: asking anew would lose the progress sent meanwhile.
      lastEventId = undefined;
      record.restarts += 1;
      bump(stats.retries, `tasks/result sent again after resume: HTTP ${result.status}`);
    }
    await sleep(delay);
  }
}
