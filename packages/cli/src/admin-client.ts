import { randomBytes } from 'node:crypto';
import {
  type AdminCancelResult,
  type AdminTask,
  type AdminTaskDetail,
  type AdminTaskPage,
  type AdminTaskQuery,
  AdminTasks,
  closeRedis,
  createRedisConnection,
  Keys,
  type PurgeProgress,
  TaskOutbox,
  TaskStore,
  TaskTrail,
  ToolCatalog,
  ToolQueues,
} from '@taskgate/core';

/** What `taskgate tasks` does, through the admin listener or on Redis directly. */
export interface TasksBackend {
  list(query: AdminTaskQuery): Promise<AdminTaskPage>;
  get(taskId: string): Promise<AdminTaskDetail | undefined>;
  cancel(taskId: string): Promise<AdminCancelResult>;
  purge(
    query: { status?: string[]; olderThanMs: number },
    onProgress: (progress: PurgeProgress) => void,
  ): Promise<{ scanned: number; purged: number }>;
  close(): Promise<void>;
}

/** A failure the CLI reports as it is (exit code 1), e.g. a refused token or an unreachable listener. */
export class AdminClientError extends Error {
  override readonly name = 'AdminClientError';
}

const CANCEL_MESSAGE = 'The task was cancelled by an operator.';

/** The admin API of a gateway's admin listener (`--admin-url`, `--admin-token`). */
export function httpBackend(baseUrl: string, token: string): TasksBackend {
  const base = baseUrl.replace(/\/+$/, '').replace(/\/admin\/?$/, '');
  const call = async (path: string, init: RequestInit = {}): Promise<Response> => {
    let res: Response;
    try {
      res = await fetch(`${base}/admin/api${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, ...(init.headers ?? {}) },
      });
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new AdminClientError(`cannot reach the admin listener at ${base}: ${cause}`);
    }
    if (res.status === 401) {
      throw new AdminClientError(
        `the admin listener at ${base} refused the token (401): check --admin-token or TASKGATE_ADMIN_TOKEN`,
      );
    }
    return res;
  };
  const failure = async (res: Response): Promise<never> => {
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    throw new AdminClientError(`the admin listener answered ${res.status}: ${body.error ?? res.statusText}`);
  };
  return {
    async list(query) {
      const params = new URLSearchParams();
      if (query.status !== undefined && query.status.length > 0) params.set('status', query.status.join(','));
      if (query.tool !== undefined) params.set('tool', query.tool);
      if (query.cursor !== undefined) params.set('cursor', query.cursor);
      if (query.limit !== undefined) params.set('limit', String(query.limit));
      const res = await call(`/tasks?${params}`);
      return res.ok ? ((await res.json()) as AdminTaskPage) : await failure(res);
    },
    async get(taskId) {
      const res = await call(`/tasks/${encodeURIComponent(taskId)}`);
      if (res.status === 404) return undefined;
      return res.ok ? ((await res.json()) as AdminTaskDetail) : await failure(res);
    },
    async cancel(taskId) {
      const res = await call(`/tasks/${encodeURIComponent(taskId)}/cancel`, { method: 'POST' });
      if (res.status === 404) return { ok: false, reason: 'not_found' };
      if (res.status === 409) {
        const detail = await this.get(taskId);
        return { ok: false, reason: 'terminal', status: detail?.task.status ?? 'cancelled' };
      }
      if (!res.ok) return await failure(res);
      return { ok: true, task: ((await res.json()) as { task: AdminTask }).task };
    },
    async purge(query, onProgress) {
      const res = await call('/purge', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          ...(query.status !== undefined && { status: query.status }),
          olderThanMs: query.olderThanMs,
        }),
      });
      if (!res.ok || res.body === null) return await failure(res);
      let buffer = '';
      let last: { scanned: number; purged: number } = { scanned: 0, purged: 0 };
      for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        let end = buffer.indexOf('\n');
        while (end >= 0) {
          const line = JSON.parse(buffer.slice(0, end)) as PurgeProgress & { done?: boolean };
          buffer = buffer.slice(end + 1);
          if (line.done === true) last = { scanned: line.scanned, purged: line.purged };
          else onProgress(line);
          end = buffer.indexOf('\n');
        }
      }
      return last;
    },
    async close() {},
  };
}

/** The same operations on Redis directly (`--redis`), for when no gateway runs an admin listener. */
export function redisBackend(url: string, prefix: string): TasksBackend {
  const redis = createRedisConnection({ url }, 'command');
  const keys = new Keys(prefix);
  const tasks = new TaskStore({ redis, keys, cursorSecret: randomBytes(32) });
  const catalog = new ToolCatalog({ redis, keys });
  const queues = new ToolQueues({ connection: redis, keys });
  const admin = new AdminTasks({
    redis,
    keys,
    tasks,
    outbox: new TaskOutbox({ redis, keys }),
    trail: new TaskTrail(redis, keys),
    catalog,
    queues,
  });
  return {
    list: (query) => admin.list(query),
    get: (taskId) => admin.detail(taskId),
    cancel: (taskId) => admin.cancel(taskId, CANCEL_MESSAGE),
    purge: (query, onProgress) =>
      admin.purge({
        ...(query.status !== undefined && { status: query.status as NonNullable<AdminTaskQuery['status']> }),
        olderThanMs: query.olderThanMs,
        onProgress,
      }),
    async close() {
      await queues.close();
      await closeRedis(redis);
    },
  };
}
