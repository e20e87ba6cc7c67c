import { fileURLToPath } from 'node:url';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, forkNode, freePort, useRedis, waitFor } from '@taskgate/test-harness';
import { TEST_TOOLS } from '@taskgate/test-harness/tools';
import { createWorker } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { forkGateway, waitForOutput } from '../gateway/fixtures/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const SECRET = 'cli-tasks-cursor-secret-0123456789';
const ADMIN_TOKEN = 'cli-tasks-admin-token-0123456789';

// Every step forks the CLI from sources (a second or two each on a busy machine): generous, bounded timeouts.
const SLOW_MS = 120_000;
/** The longest sleep the tool takes: its task must still be working when the test cancels it, however slow the machine. */
const RUNNING_MS = 60_000;

/** Runs `taskgate tasks …` from sources; resolves with its exit code and output. */
async function tasks(args: readonly string[], env: Record<string, string> = {}) {
  const proc = forkNode(`${root}packages/cli/src/run.ts`, ['tasks', ...args], env);
  const code = await proc.exited;
  return { code, output: proc.output() };
}

describe('taskgate tasks (the admin CLI)', () => {
  const redis = useRedis();

  it(
    'lists, shows, cancels and purges through the admin listener, as tables and as JSON, with clear errors',
    async () => {
      const adminPort = await freePort();
      const worker = createWorker({ redis: redis.url, prefix: redis.prefix, tools: TEST_TOOLS });
      const { proc, url } = await forkGateway({
        REDIS_URL: redis.url,
        TASKGATE_KEY_PREFIX: redis.prefix,
        TASKGATE_CURSOR_SECRET: SECRET,
        TASKGATE_ADMIN_PORT: String(adminPort),
        TASKGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      });
      try {
        await worker.ready;
        await waitForOutput(proc, /admin listener listening/);
        const admin = { TASKGATE_ADMIN_URL: `http://127.0.0.1:${adminPort}`, TASKGATE_ADMIN_TOKEN: ADMIN_TOKEN };
        const { client } = await connectClient(url);
        const start = async (name: string, args: Record<string, unknown>) =>
          (
            await client.request(
              { method: 'tools/call', params: { name, arguments: args, task: {} } },
              CreateTaskResultSchema,
            )
          ).task.taskId;
        const done = await start('report', { pages: 2 });
        const running = await start('sleep', { ms: RUNNING_MS });
        await waitFor(async () => (await client.experimental.tasks.getTask(done)).status === 'completed', 'done');

        const table = await tasks(['list'], admin);
        expect(table.code).toBe(0);
        expect(table.output).toMatch(/^TASK +STATUS +TOOL +OWNER +CREATED +UPDATED +MESSAGE$/m);
        expect(table.output).toMatch(new RegExp(`^${done} +completed +report `, 'm'));
        expect(table.output).toMatch(new RegExp(`^${running} +working +sleep `, 'm'));

        const json = await tasks(['list', '--status', 'working', '--json'], admin);
        expect(json.code).toBe(0);
        const page = JSON.parse(json.output) as { tasks: { taskId: string; status: string }[] };
        expect(page.tasks.map((task) => [task.taskId, task.status])).toEqual([[running, 'working']]);

        const got = await tasks(['get', done], admin);
        expect(got.code).toBe(0);
        expect(got.output).toMatch(/^status +completed/m);
        expect(got.output).toMatch(/ started +attempt 1 /);
        expect(got.output).toMatch(/ finished +completed /);

        const cancelled = await tasks(['cancel', running, '--json'], admin);
        expect(cancelled.code).toBe(0);
        expect(JSON.parse(cancelled.output)).toMatchObject({ taskId: running, status: 'cancelled' });
        expect((await client.experimental.tasks.getTask(running)).status).toBe('cancelled');
        const again = await tasks(['cancel', running], admin);
        expect(again.code).toBe(1);
        expect(again.output).toContain(`task ${running} cancelled already: it cannot be cancelled`);

        const purged = await tasks(['purge', '--status', 'completed'], admin);
        expect(purged.code).toBe(0);
        expect(purged.output.trim()).toBe('purged 1 of 2 tasks scanned');
        const gone = await tasks(['get', done], admin);
        expect(gone.code).toBe(1);
        expect(gone.output).toContain(`task ${done} not found`);

        const wrong = await tasks(['list'], { ...admin, TASKGATE_ADMIN_TOKEN: 'not-the-admin-token-0000' });
        expect(wrong.code).toBe(1);
        expect(wrong.output).toContain('refused the token (401): check --admin-token or TASKGATE_ADMIN_TOKEN');
        expect(proc.output()).not.toContain(ADMIN_TOKEN);
        expect(proc.output()).toContain('"audit":"admin.task.cancelled"');
      } finally {
        await proc.stop('SIGKILL');
        await worker.close({ deadlineMs: 500 });
      }
    },
    SLOW_MS,
  );

  it(
    'works on Redis directly with --redis',
    async () => {
      const worker = createWorker({ redis: redis.url, prefix: redis.prefix, tools: TEST_TOOLS });
      const { proc, url } = await forkGateway({
        REDIS_URL: redis.url,
        TASKGATE_KEY_PREFIX: redis.prefix,
        TASKGATE_CURSOR_SECRET: SECRET,
      });
      try {
        await worker.ready;
        const { client } = await connectClient(url);
        const created = await client.request(
          { method: 'tools/call', params: { name: 'sleep', arguments: { ms: RUNNING_MS }, task: {} } },
          CreateTaskResultSchema,
        );
        const taskId = created.task.taskId;
        const direct = ['--redis', redis.url, '--key-prefix', redis.prefix];
        const listed = await tasks(['list', '--json', '--all', ...direct]);
        expect(listed.code).toBe(0);
        expect((JSON.parse(listed.output) as { tasks: { taskId: string }[] }).tasks.map((t) => t.taskId)).toEqual([
          taskId,
        ]);
        const cancelled = await tasks(['cancel', taskId, ...direct]);
        expect(cancelled.code, cancelled.output).toBe(0);
        expect(cancelled.output.trim()).toBe(`task ${taskId} cancelled`);
        expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
        const purged = await tasks(['purge', '--json', '--older-than', '0s', ...direct]);
        expect(JSON.parse(purged.output)).toEqual({ scanned: 1, purged: 1 });
        const unknown = await tasks(['get', taskId, ...direct]);
        expect(unknown.code).toBe(1);
        expect(unknown.output).toContain('not found');
        // A task id may start with '-' or '--' (base64url): it is an id, not a flag.
        for (const dashed of [`-A${taskId.slice(2)}`, `--${taskId.slice(2)}`]) {
          const got = await tasks(['get', dashed, ...direct]);
          expect(got.code, got.output).toBe(1);
          expect(got.output).toContain(`task ${dashed} not found`);
        }
      } finally {
        await proc.stop('SIGKILL');
        await worker.close({ deadlineMs: 500 });
      }
    },
    SLOW_MS,
  );

  it(
    'refuses bad flags and a missing token with exit code 2, naming the problem',
    async () => {
      const bad = await tasks(['list', '--status', 'done', '--redis', redis.url]);
      expect(bad.code).toBe(2);
      expect(bad.output).toContain(
        "--status: 'done' is not one of working, input_required, completed, failed, cancelled",
      );
      const noToken = await tasks(['list'], { TASKGATE_ADMIN_URL: 'http://127.0.0.1:1' });
      expect(noToken.code).toBe(2);
      expect(noToken.output).toContain('--admin-token (TASKGATE_ADMIN_TOKEN) is required');
      const flag = await tasks(['list', '--colour']);
      expect(flag.code).toBe(2);
      expect(flag.output).toContain('unknown flag --colour (taskgate tasks --help lists every flag)');
    },
    SLOW_MS,
  );

  it(
    'refuses to start a gateway with an admin port and no admin token',
    async () => {
      const proc = forkNode(`${root}packages/cli/src/run.ts`, ['gateway'], {
        REDIS_URL: redis.url,
        TASKGATE_CURSOR_SECRET: SECRET,
        PORT: '0',
        TASKGATE_ADMIN_PORT: String(await freePort()),
        TASKGATE_ADMIN_TOKEN: '',
      });
      expect(await proc.exited).toBe(2);
      expect(proc.output()).toContain('TASKGATE_ADMIN_PORT (--admin-port) needs TASKGATE_ADMIN_TOKEN (--admin-token)');
    },
    SLOW_MS,
  );
});
