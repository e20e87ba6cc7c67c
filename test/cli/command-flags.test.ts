import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forkNode, freePort, rawInitialize, useRedis } from '@taskgate/test-harness';
import { afterEach, describe, expect, it } from 'vitest';
import { waitForOutput } from '../gateway/fixtures/processes.js';

// The `taskgate` commands as processes: every flag a command's --help lists does what it says, and a flag the
// command does not honour is refused with a message (never read and ignored).

const cli = fileURLToPath(new URL('../../packages/cli/src/run.ts', import.meta.url));
const ADMIN_TOKEN = 'dev-admin-token-0123456789abcdef';

const dirs: string[] = [];
function emptyDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'taskgate-cli-flags-'));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('taskgate dev with REDIS_URL and TASKGATE_CURSOR_SECRET', () => {
  const redis = useRedis();

  it('writes nothing to its directory, and --admin-port with --admin-token starts the admin listener', async () => {
    const cwd = emptyDir();
    const adminPort = await freePort();
    const dev = forkNode(
      cli,
      ['dev', '--port', '0', '--admin-port', String(adminPort), '--admin-token', ADMIN_TOKEN],
      {
        REDIS_URL: redis.url,
        TASKGATE_KEY_PREFIX: redis.prefix,
        TASKGATE_CURSOR_SECRET: 'dev-cursor-secret-0123456789abcdef',
      },
      { cwd },
    );
    try {
      const [, url] = await waitForOutput(dev, /MCP endpoint\s+(http:\/\/\S+\/mcp)/, 60_000);
      const [, admin] = await waitForOutput(dev, /admin\s+(http:\/\/\S+\/admin\/)/);
      // Log lines and the banner reach the pipe on their own paths: the line may follow the banner.
      await waitForOutput(dev, /"msg":"admin listener listening"/);
      expect(new URL(admin as string).port).toBe(String(adminPort));
      const api = `${new URL(admin as string).origin}/admin/api/tasks`;
      const allowed = await fetch(api, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(allowed.status).toBe(200);
      expect(await allowed.json()).toMatchObject({ tasks: [] });
      expect((await fetch(api)).status).toBe(401);
      expect((await fetch(api, { headers: { Authorization: 'Bearer wrong-token-0123456789abcdef' } })).status).toBe(
        401,
      );
      expect(await rawInitialize(url as string)).toMatch(/^[\x21-\x7e]{32,}$/);
      process.kill(dev.pid, 'SIGTERM');
      expect(await dev.exited).toBe(0);
      expect(readdirSync(cwd)).toEqual([]);
    } finally {
      await dev.stop('SIGKILL');
    }
  }, 90_000);
});

describe('a flag a command does not honour', () => {
  const refusals: [string, string[], string][] = [
    [
      'bridge',
      ['--config', 'bridge.yaml', '--tools', './tools.js'],
      '--tools (TASKGATE_TOOLS) is not a flag of taskgate bridge (taskgate bridge --help lists every flag)',
    ],
    [
      'worker',
      ['--tools', './tools.js', '--config', 'bridge.yaml'],
      '--config (TASKGATE_BRIDGE_CONFIG) is not a flag of taskgate worker (taskgate worker --help lists every flag)',
    ],
    [
      'dev',
      ['--metrics-port', '9464'],
      '--metrics-port (TASKGATE_METRICS_PORT) is not a flag of taskgate dev (taskgate dev --help lists every flag)',
    ],
    [
      'gateway',
      ['--tools=./tools.js'],
      '--tools (TASKGATE_TOOLS) is not a flag of taskgate gateway (taskgate gateway --help lists every flag)',
    ],
    ['gateway', ['--port', '0', 'stray'], "taskgate gateway takes no arguments, got 'stray' (taskgate gateway --help)"],
    [
      'bridge',
      ['--config', 'bridge.yaml', './tools.js'],
      "taskgate bridge takes no arguments, got './tools.js' (taskgate bridge --help)",
    ],
  ];

  it.each(refusals)('taskgate %s %j is refused with exit 2, before anything starts', async (command, args, problem) => {
    const cwd = emptyDir();
    const proc = forkNode(cli, [command, ...args], { REDIS_URL: 'redis://127.0.0.1:1' }, { cwd });
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toBe(`taskgate ${command}: Invalid configuration:\n  - ${problem}\n`);
    expect(readdirSync(cwd)).toEqual([]);
  });
});
