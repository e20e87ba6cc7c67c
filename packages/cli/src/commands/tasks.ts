import { parseArgs } from 'node:util';
import { isTaskIdShape } from '@taskgate/core';
import { DEFAULT_KEY_PREFIX } from '@taskgate/core/defaults';
import { TaskStatusSchema } from '@taskgate/protocol';
import { AdminClientError, httpBackend, redisBackend, type TasksBackend } from '../admin-client.js';
import { flagProblem } from '../closest-flag.js';
import { ConfigError } from '../config.js';
import { progressBar, taskReport, tasksTable } from '../tasks-output.js';

const USAGE = `usage: taskgate tasks <list|get|cancel|purge> [flags]

  list   [--status S[,S]] [--tool NAME] [--limit N] [--cursor C | --all]   every owner's tasks
  get    <task-id>                                            one task and its timeline
  cancel <task-id>                                            cancel it, as tasks/cancel would
  purge  [--status S[,S]] [--older-than 7d]                   delete finished tasks

  --admin-url URL     the gateway's admin listener (TASKGATE_ADMIN_URL; default http://127.0.0.1:$TASKGATE_ADMIN_PORT)
  --admin-token T     its token (TASKGATE_ADMIN_TOKEN)
  --redis URL         work on Redis directly instead (with --key-prefix, TASKGATE_KEY_PREFIX, default tg)
  --json              machine-readable output`;

const STATUSES = TaskStatusSchema.options;

function statuses(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const list = value.split(',').map((each) => each.trim());
  const bad = list.find((each) => !(STATUSES as readonly string[]).includes(each));
  if (bad !== undefined) throw new ConfigError([`--status: '${bad}' is not one of ${STATUSES.join(', ')}`]);
  return list;
}

/** `30000`, `90s`, `30m`, `12h`, `7d` → ms. */
function duration(value: string | undefined): number {
  if (value === undefined) return 0;
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(value.trim());
  if (match === null) throw new ConfigError([`--older-than: '${value}' is not a duration such as 30m, 12h or 7d`]);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms'] ?? 1;
  return Number(match[1]) * unit;
}

function backendOf(values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): TasksBackend {
  const redis = values.redis as string | undefined;
  if (redis !== undefined) {
    if (!/^rediss?:\/\//.test(redis))
      throw new ConfigError([`--redis: '${redis}' must start with redis:// or rediss://`]);
    return redisBackend(
      redis,
      (values['key-prefix'] as string | undefined) ?? env.TASKGATE_KEY_PREFIX ?? DEFAULT_KEY_PREFIX,
    );
  }
  const url =
    (values['admin-url'] as string | undefined) ??
    env.TASKGATE_ADMIN_URL ??
    (env.TASKGATE_ADMIN_PORT !== undefined ? `http://127.0.0.1:${env.TASKGATE_ADMIN_PORT}` : undefined);
  const token = (values['admin-token'] as string | undefined) ?? env.TASKGATE_ADMIN_TOKEN;
  const problems: string[] = [];
  if (url === undefined) problems.push('--admin-url (TASKGATE_ADMIN_URL) or --redis is required');
  else if (!URL.canParse(url)) problems.push(`--admin-url: '${url}' is not a URL`);
  if (token === undefined) problems.push('--admin-token (TASKGATE_ADMIN_TOKEN) is required with the admin listener');
  if (problems.length > 0) throw new ConfigError([...problems, USAGE]);
  return httpBackend(url as string, token as string);
}

/**
 * A task id is base64url, so one in 64 starts with '-' (and one in 4096 with '--'), which parseArgs would take
 * for a flag: such an argument before any `--` (no flag of this command is 16 characters of base64url) goes
 * after a `--`, where it is a positional.
 */
function idsAsPositionals(argv: readonly string[]): string[] {
  const end = argv.indexOf('--');
  const flags = end === -1 ? [...argv] : argv.slice(0, end);
  const ids = flags.filter((arg) => arg.startsWith('-') && isTaskIdShape(arg));
  if (ids.length === 0) return [...argv];
  const after = end === -1 ? [] : argv.slice(end + 1);
  return [...flags.filter((arg) => !ids.includes(arg)), '--', ...ids, ...after];
}

/** `taskgate tasks list|get|cancel|purge`: operators' view of every owner's tasks. */
export async function runTasks(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(idsAsPositionals(argv));
  } catch (error) {
    const known = Object.keys(OPTIONS).map((name) => `--${name}`);
    throw new ConfigError([flagProblem(error, known, 'tasks'), USAGE]);
  }
  const { values, positionals } = parsed;
  const [action, taskId, ...extra] = positionals;
  const json = values.json === true;
  const out = (text: string): boolean => process.stdout.write(`${text}\n`);
  if (values.help === true || action === 'help') {
    out(USAGE);
    return 0;
  }
  if (action === undefined || !['list', 'get', 'cancel', 'purge'].includes(action)) {
    throw new ConfigError([action === undefined ? 'name an action' : `unknown action '${action}'`, USAGE]);
  }
  const needsId = action === 'get' || action === 'cancel';
  if (needsId && taskId === undefined) throw new ConfigError([`taskgate tasks ${action} needs a task id`, USAGE]);
  if ((!needsId && taskId !== undefined) || extra.length > 0) {
    throw new ConfigError([`unexpected argument '${needsId ? extra[0] : taskId}'`, USAGE]);
  }
  const status = statuses(values.status);
  const olderThanMs = duration(values['older-than']);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1 || limit > 500)) {
    throw new ConfigError([`--limit: must be an integer from 1 to 500, got '${values.limit}'`]);
  }
  if (action === 'purge' && status?.some((each) => each === 'working' || each === 'input_required')) {
    throw new ConfigError(['--status: only finished tasks (completed, failed, cancelled) can be purged']);
  }
  const backend = backendOf(values, env);
  try {
    switch (action) {
      case 'list': {
        const tasks = [];
        let cursor = values.cursor;
        do {
          const page = await backend.list({
            ...(status !== undefined && { status: status as (typeof STATUSES)[number][] }),
            ...(values.tool !== undefined && { tool: values.tool }),
            ...(cursor !== undefined && { cursor }),
            ...(limit !== undefined && { limit }),
          });
          tasks.push(...page.tasks);
          cursor = page.nextCursor;
          if (values.all !== true) {
            if (json) out(JSON.stringify(page));
            else out(`${tasksTable(page.tasks)}${cursor === undefined ? '' : `\n(more: --cursor ${cursor})`}`);
            return 0;
          }
        } while (cursor !== undefined);
        out(json ? JSON.stringify({ tasks }) : tasksTable(tasks));
        return 0;
      }
      case 'get': {
        const detail = await backend.get(taskId as string);
        if (detail === undefined) {
          process.stderr.write(`taskgate tasks get: task ${taskId} not found (unknown, expired or purged)\n`);
          return 1;
        }
        out(json ? JSON.stringify(detail) : taskReport(detail));
        return 0;
      }
      case 'cancel': {
        const result = await backend.cancel(taskId as string);
        if (!result.ok) {
          const why = result.reason === 'not_found' ? 'not found' : `${result.status} already: it cannot be cancelled`;
          process.stderr.write(`taskgate tasks cancel: task ${taskId} ${why}\n`);
          return 1;
        }
        out(json ? JSON.stringify(result.task) : `task ${result.task.taskId} cancelled`);
        return 0;
      }
      default: {
        const bar = progressBar();
        const total = await backend
          .purge({ ...(status !== undefined && { status }), olderThanMs }, bar.update)
          .finally(bar.done);
        out(json ? JSON.stringify(total) : `purged ${total.purged} of ${total.scanned} tasks scanned`);
        return 0;
      }
    }
  } catch (error) {
    if (error instanceof AdminClientError) {
      process.stderr.write(`taskgate tasks ${action}: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await backend.close();
  }
}

const OPTIONS = {
  'admin-url': { type: 'string' },
  'admin-token': { type: 'string' },
  redis: { type: 'string' },
  'key-prefix': { type: 'string' },
  json: { type: 'boolean' },
  status: { type: 'string' },
  tool: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  all: { type: 'boolean' },
  'older-than': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(argv: readonly string[]) {
  return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
}
