import {
  type AdminTasks,
  errorMessage,
  isRedisUnavailable,
  type Logger,
  queueStats,
  type ToolCatalog,
  type ToolQueues,
  type WorkerRegistry,
} from '@taskgate/core';
import { type TaskStatus, TaskStatusSchema } from '@taskgate/protocol';
import express, { type Request, type Response, type Router } from 'express';

/** What the admin API reads and changes. */
export interface AdminApiDeps {
  readonly admin: AdminTasks;
  readonly catalog: ToolCatalog;
  readonly queues: ToolQueues;
  readonly workers: WorkerRegistry;
  readonly logger: Logger;
}

/** A request the API refuses, with the status and a message naming what to fix. */
class BadRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const TASK_ID = /^[A-Za-z0-9_-]{1,64}$/;

function statuses(value: unknown, name: string): TaskStatus[] | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new BadRequest(400, `${name}: give it once, as a comma-separated list`);
  return value.split(',').map((each) => {
    const parsed = TaskStatusSchema.safeParse(each.trim());
    if (!parsed.success) {
      throw new BadRequest(400, `${name}: '${each}' is not one of ${TaskStatusSchema.options.join(', ')}`);
    }
    return parsed.data;
  });
}

function integer(value: unknown, name: string, min: number, max: number): number | undefined {
  if (value === undefined || value === '') return undefined;
  const number = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    throw new BadRequest(400, `${name}: must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return number;
}

function taskIdOf(req: Request): string {
  const id = req.params.taskId;
  if (typeof id !== 'string' || !TASK_ID.test(id)) throw new BadRequest(400, 'taskId: not a task id');
  return id;
}

/** Runs a handler and turns what it throws into a JSON error (never the process down). */
function handle(logger: Logger, run: (req: Request, res: Response) => Promise<void>) {
  return (req: Request, res: Response): void => {
    run(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.end();
        return;
      }
      if (error instanceof BadRequest) {
        res.status(error.status).json({ error: error.message });
      } else if (isRedisUnavailable(error)) {
        res.status(503).json({ error: 'Redis is unavailable; try again' });
      } else {
        logger.error({ err: errorMessage(error) }, 'admin request failed');
        res.status(500).json({ error: 'Internal error' });
      }
    });
  };
}

/** The admin API (JSON, under `/admin/api`): tasks across owners, a task's timeline, queues, workers, cancel, purge. */
export function adminApi(deps: AdminApiDeps): Router {
  const { admin, logger } = deps;
  const api = express.Router();
  api.use(express.json({ limit: '16kb' }));

  api.get(
    '/tasks',
    handle(logger, async (req, res) => {
      const tool = req.query.tool;
      if (tool !== undefined && typeof tool !== 'string') throw new BadRequest(400, 'tool: give one tool name');
      const cursor = req.query.cursor;
      if (cursor !== undefined && (typeof cursor !== 'string' || !/^\d+:\d+$/.test(cursor))) {
        throw new BadRequest(400, 'cursor: not a cursor this API returned');
      }
      const status = statuses(req.query.status, 'status');
      const limit = integer(req.query.limit, 'limit', 1, 500);
      res.json(
        await admin.list({
          ...(status !== undefined && { status }),
          ...(tool !== undefined && tool !== '' && { tool }),
          ...(cursor !== undefined && { cursor }),
          ...(limit !== undefined && { limit }),
        }),
      );
    }),
  );
  api.get(
    '/tasks/:taskId',
    handle(logger, async (req, res) => {
      const taskId = taskIdOf(req);
      const detail = await admin.detail(taskId);
      if (detail === undefined) throw new BadRequest(404, `task ${taskId} not found (unknown, expired or purged)`);
      res.json(detail);
    }),
  );
  api.post(
    '/tasks/:taskId/cancel',
    handle(logger, async (req, res) => {
      const taskId = taskIdOf(req);
      const result = await admin.cancel(taskId, 'The task was cancelled by an operator.');
      if (!result.ok && result.reason === 'not_found') throw new BadRequest(404, `task ${taskId} not found`);
      if (!result.ok) throw new BadRequest(409, `task ${taskId} is ${result.status} already; it cannot be cancelled`);
      logger.info(
        { audit: 'admin.task.cancelled', taskId, tool: result.task.tool, owner: result.task.owner },
        'task cancelled by an operator',
      );
      res.json({ task: result.task });
    }),
  );
  api.post(
    '/purge',
    handle(logger, async (req, res) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const status = Array.isArray(body.status)
        ? statuses(body.status.join(','), 'status')
        : statuses(body.status, 'status');
      const live = status?.find((each) => each === 'working' || each === 'input_required');
      if (live !== undefined) throw new BadRequest(400, `status: only finished tasks can be purged, not '${live}'`);
      const olderThanMs = integer(body.olderThanMs, 'olderThanMs', 0, Number.MAX_SAFE_INTEGER) ?? 0;
      // Progress lines as the purge goes (NDJSON), so a long purge shows its progress; the last line is the total.
      res.status(200).type('application/x-ndjson');
      const total = await admin.purge({
        ...(status !== undefined && { status }),
        olderThanMs,
        onProgress: (progress) => res.write(`${JSON.stringify(progress)}\n`),
      });
      logger.info({ audit: 'admin.tasks.purged', ...total, status, olderThanMs }, 'finished tasks purged');
      res.end(`${JSON.stringify({ ...total, done: true })}\n`);
    }),
  );
  api.get(
    '/queues',
    handle(logger, async (_req, res) => {
      res.json({ queues: await queueStats(deps.catalog, deps.queues) });
    }),
  );
  api.get(
    '/workers',
    handle(logger, async (_req, res) => {
      res.json({ workers: await deps.workers.alive() });
    }),
  );
  api.use((_req, res) => {
    res.status(404).json({ error: 'No such admin API route' });
  });
  return api;
}
