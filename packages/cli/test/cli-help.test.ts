import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forkNode } from '@taskgate/test-harness';
import { afterAll, describe, expect, it } from 'vitest';
import { commandSettings } from '../src/command-help.js';

const cli = fileURLToPath(new URL('../src/run.ts', import.meta.url));
const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
const cwd = mkdtempSync(join(tmpdir(), 'taskgate-help-'));
/** Each test forks the real CLI from sources: seconds on a quiet machine, far more on a loaded one. */
const SLOW_MS = 120_000;

/** Runs the real `taskgate` process in an empty directory (whatever it creates there, the tests see). */
async function taskgate(args: string[]): Promise<{ code: number | NodeJS.Signals; output: string }> {
  const child = forkNode(cli, args, {}, { cwd });
  const code = await child.exited;
  return { code, output: child.output() };
}

afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('taskgate --version and --help', { timeout: SLOW_MS }, () => {
  it('prints the version and exits 0', async () => {
    expect(await taskgate(['--version'])).toEqual({ code: 0, output: `${version}\n` });
  });

  it.each([
    ['worker', ['--tools'], ['--config', '--port']],
    ['gateway', ['--port', '--cursor-secret', '--auth'], ['--tools', '--config']],
    ['bridge', ['--config'], ['--tools', '--port']],
    ['dev', ['--tools', '--port'], ['--config']],
  ] as const)(
    'taskgate %s --help lists its flags with variables and defaults, and touches nothing',
    async (command, has, hasNot) => {
      const { code, output } = await taskgate([command, '--help']);
      expect(code).toBe(0);
      expect(output).toMatch(new RegExp(`^usage: taskgate ${command} `));
      for (const flag of has) expect(output).toContain(`  ${flag} <value>`);
      for (const flag of hasNot) expect(output).not.toContain(`  ${flag} <value>`);
      // Every flag the command reads, each with its environment variable and its default (or none).
      for (const setting of commandSettings(command)) {
        expect(output).toMatch(new RegExp(`  ${setting.flag} <value> +${setting.env} \\((default|no default)`));
      }
      expect(readdirSync(cwd)).toEqual([]);
    },
  );

  it('gateway --help shows the defaults; dev --help its own shorter drain', async () => {
    expect((await taskgate(['gateway', '--help'])).output).toMatch(/--port <value> +PORT \(default 3000\)/);
    const dev = (await taskgate(['dev', '-h'])).output;
    expect(dev).toMatch(/--drain-timeout-ms <value> +TASKGATE_DRAIN_TIMEOUT_MS \(default 2000\)/);
  });

  it('call --help and tasks --help print their usage and exit 0', async () => {
    const call = await taskgate(['call', '--help']);
    expect(call.code).toBe(0);
    expect(call.output).toContain('usage: taskgate call');
    expect(call.output).toContain('--task');
    const tasks = await taskgate(['tasks', '--help']);
    expect(tasks.code).toBe(0);
    expect(tasks.output).toContain('usage: taskgate tasks');
  });
});

describe('unknown flags', { timeout: SLOW_MS }, () => {
  it.each([
    [['gateway', '--prot', '3000'], '--prot', '--port'],
    [['worker', '--tool', 'x.js'], '--tool', '--tools'],
    [['bridge', '--confg', 'b.yaml'], '--confg', '--config'],
    [['call', '--tsk', 'echo'], '--tsk', '--task'],
    [['tasks', 'list', '--stauts', 'working'], '--stauts', '--status'],
  ])('%j names the closest known flag and exits 2', async (args, typo, near) => {
    const { code, output } = await taskgate(args);
    expect(code).toBe(2);
    expect(output).toContain(`unknown flag ${typo}; did you mean ${near}?`);
  });

  it('a flag far from every known one gets no guess', async () => {
    const { code, output } = await taskgate(['gateway', '--completely-different']);
    expect(code).toBe(2);
    expect(output).toContain('unknown flag --completely-different (taskgate gateway --help lists every flag)');
  });

  it('dev with a bad flag creates nothing: no .data/, no redis-server', async () => {
    const { code, output } = await taskgate(['dev', '--prot', '1']);
    expect(code).toBe(2);
    expect(output).toContain('did you mean --port?');
    expect(output).not.toContain('taskgate dev is running');
    expect(readdirSync(cwd)).toEqual([]);
  });
});
