/** The console's side of the admin API: the token from the sign-in form, sent as a bearer header. */

const TOKEN_KEY = 'taskgate.adminToken';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export interface AdminTask {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  tool?: string;
  kind: 'task' | 'direct';
  owner: string;
  createdAt: number;
  lastUpdatedAt: number;
  expiresAt: number;
  attempt?: number;
}

export interface TimelineEntry {
  at: number;
  event: string;
  pod?: string;
  detail?: string;
}

export interface TaskDetail {
  task: AdminTask;
  outcome?: { isError: boolean } | { error: { code: number; message: string } };
  timeline: TimelineEntry[];
  pods: string[];
}

export interface QueueStats {
  queue: string;
  /** Which shard of a sharded tool queue (absent: one shard). */
  shard?: { index: number; of: number };
  tools: string[];
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  oldestWaitingMs: number;
}

export interface WorkerInfo {
  id: string;
  pod: string;
  tools: string[];
  startedAt: number;
  until: number;
}

export interface TaskEvent {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  tool?: string;
  lastUpdatedAt: number;
}

/** A refusal of the admin API, with its status (401: the token is wrong). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

async function call<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`/admin/api${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${session.token() ?? ''}`, ...(init.headers ?? {}) },
  });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    throw new ApiError(res.status, body.error ?? `HTTP ${res.status}`);
  }
  return (await res.json()) as T;
}

export const api = {
  tasks: (status: string, tool: string, cursor?: string) => {
    const query = new URLSearchParams({ limit: '200' });
    if (status !== '') query.set('status', status);
    if (tool !== '') query.set('tool', tool);
    if (cursor !== undefined) query.set('cursor', cursor);
    return call<{ tasks: AdminTask[]; nextCursor?: string }>(`/tasks?${query}`);
  },
  task: (taskId: string) => call<TaskDetail>(`/tasks/${encodeURIComponent(taskId)}`),
  cancel: (taskId: string) =>
    call<{ task: AdminTask }>(`/tasks/${encodeURIComponent(taskId)}/cancel`, { method: 'POST' }),
  queues: () => call<{ queues: QueueStats[] }>('/queues'),
  workers: () => call<{ workers: WorkerInfo[] }>('/workers'),
  /** Lets the raw-queues link open with a cookie (a link cannot carry the header). */
  openQueuesSession: () =>
    fetch('/admin/api/session', { method: 'POST', headers: { Authorization: `Bearer ${session.token() ?? ''}` } }),
};

/**
 * Follows the live task updates (SSE over fetch: EventSource cannot send the header) until `signal` aborts;
 * reconnects after a drop.
 */
export async function followEvents(
  onEvent: (event: TaskEvent) => void,
  onState: (live: boolean) => void,
  signal: AbortSignal,
) {
  while (!signal.aborted) {
    try {
      const res = await fetch('/admin/api/events', {
        headers: { Authorization: `Bearer ${session.token() ?? ''}` },
        signal,
      });
      if (!res.ok || res.body === null) throw new ApiError(res.status, 'no event stream');
      onState(true);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').find((line) => line.startsWith('data: '));
          if (block.startsWith('event: task') && data !== undefined) onEvent(JSON.parse(data.slice(6)) as TaskEvent);
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // Dropped or refused: try again shortly.
    }
    onState(false);
    if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}
