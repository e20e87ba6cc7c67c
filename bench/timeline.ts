/**
 * Where one task's time goes at one in flight: `bash scripts/bench --timeline [--tasks N]` (or `node
 * --conditions=taskgate-source --import tsx bench/timeline.ts`; `--profile` adds the top 25 functions by self
 * time of the gateway and the worker, from `node --cpu-prof`). Starts one taskgate gateway and worker on a
 * private redis-server, warms up, then with a lean client (raw JSON-RPC over keep-alive HTTP, create →
 * tasks/result, one task at a time):
 * 1. runs N tasks (default 2000) and prints the create→result p50 and the CPU time per task of each process
 *    (user and system, from /proc), the client's included: on a small machine the processes of one task
 *    compete for its cores, and their CPU sets the latency as much as the round trips do;
 * 2. runs up to 500 more under Redis MONITOR (`redis-cli monitor` to a file, so the bench process does no
 *    work per command) and prints, per step, the median time from the client's send of `tools/call`: the
 *    client's own marks and each command as Redis received it, named by the process whose connection sent
 *    it. MONITOR slows Redis: the times of part 2 are longer than those of part 1, their order is the point.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { parseConfig } from './lib/config.js';
import { answerOf } from './lib/lean-client.js';
import { cpuTimes, localPortsTo } from './lib/proc-stats.js';
import { ProcessSet } from './lib/processes.js';
import { profilesIn, renderTop, topSelfTime } from './lib/profile.js';
import { percentile } from './lib/stats.js';
import { startTaskgate } from './systems/taskgate.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** Wall-clock microseconds, comparable with MONITOR's timestamps on the same machine. */
const nowUs = (): number => (performance.timeOrigin + performance.now()) * 1000;
const median = (values: readonly number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

/** The lean create → result path with a mark when the create's answer arrived. */
class TimedClient {
  readonly #pool: Pool;
  readonly #path: string;
  #sessionId: string | undefined;
  #id = 1;

  constructor(url: string) {
    const parsed = new URL(url);
    this.#pool = new Pool(parsed.origin, { pipelining: 1 });
    this.#path = parsed.pathname;
  }

  async #post(method: string, params?: unknown): Promise<Record<string, unknown> | undefined> {
    const id = this.#id++;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(this.#sessionId !== undefined && { 'mcp-session-id': this.#sessionId }),
    };
    const notification = method.startsWith('notifications/');
    const body = JSON.stringify({ jsonrpc: '2.0', ...(!notification && { id }), method, params });
    const response = await this.#pool.request({ path: this.#path, method: 'POST', headers, body });
    const text = await response.body.text();
    if (notification) return undefined;
    const session = response.headers['mcp-session-id'];
    if (typeof session === 'string') this.#sessionId = session;
    const answer = answerOf(String(response.headers['content-type'] ?? ''), text, id);
    if (answer.result === undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result;
  }

  async open(): Promise<void> {
    await this.#post('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'timeline', version: '1' },
    });
    await this.#post('notifications/initialized');
  }

  /** One task; `created` is called when the create's answer arrived. */
  async task(created: () => void = () => {}): Promise<void> {
    const task = (await this.#post('tools/call', { name: 'noop', arguments: {}, task: {} }))?.task as {
      taskId: string;
    };
    created();
    const result = await this.#post('tasks/result', { taskId: task.taskId });
    if (JSON.stringify(result?.content) !== '[{"type":"text","text":"ok"}]') throw new Error('unexpected result');
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

/** One line of `redis-cli monitor`: its time (µs), the client's port, and the command with its arguments. */
function parseMonitorLine(line: string): { t: number; port: number; args: string[] } | undefined {
  const match = /^(\d+\.\d+) \[\d+ [^\]]*:(\d+)\] (.*)$/.exec(line);
  if (match === null) return undefined;
  const args = (match[3]?.match(/"((?:[^"\\]|\\.)*)"/g) ?? []).map((arg) => arg.slice(1, -1));
  return { t: Number(match[1]) * 1e6, port: Number(match[2]), args };
}

/** A command as a step: scripts by their number of keys and first key, ids shortened. */
function stepOf(args: readonly string[]): string {
  const short = (arg: string | undefined) =>
    (arg ?? '')
      .replace(/[A-Za-z0-9_-]{20,}/g, '…')
      .replace(/\{[A-Za-z0-9_-]{4}\}/g, '{t}')
      .slice(0, 44);
  const name = (args[0] ?? '').toLowerCase();
  return name === 'evalsha' ? `evalsha (${args[2]} keys) ${short(args[3])}` : `${name} ${short(args[1])}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { tasks: { type: 'string' }, profile: { type: 'boolean', default: false } },
    strict: false,
  });
  const tasks = Number(values.tasks ?? 2000);
  const monitored = Math.min(tasks, 500);
  const config = parseConfig(['--quick', '--no-fastmcp', ...(values.profile === true ? ['--profile'] : [])], root);
  const logDir = mkdtempSync(join(tmpdir(), 'taskgate-timeline-'));
  const processes = new ProcessSet(logDir);
  const monitorFile = join(logDir, 'monitor.txt');
  try {
    const taskgate = await startTaskgate(config, processes, root);
    const client = new TimedClient(taskgate.url);
    processes.add('timeline client', () => client.close());
    await client.open();
    for (let i = 0; i < 300; i++) await client.task();

    // 1. CPU per task and the p50, nothing else running.
    const pids = {
      gateway: taskgate.gateways[0]?.pid ?? -1,
      worker: taskgate.workers[0]?.pid ?? -1,
      'redis-server': taskgate.redisServer.pid,
      'bench client': process.pid,
    };
    const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuTimes(pid)]));
    const totals: number[] = [];
    for (let i = 0; i < tasks; i++) {
      const start = nowUs();
      await client.task();
      totals.push(nowUs() - start);
    }
    process.stdout.write(
      `\n## ${tasks} tasks, one at a time: create→result p50 ${(median(totals) / 1000).toFixed(2)} ms\n`,
    );
    process.stdout.write('CPU ms per task (user + system):\n');
    for (const [name, pid] of Object.entries(pids)) {
      const now = cpuTimes(pid);
      const was = before[name] ?? now;
      const user = (now.user - was.user) / tasks;
      const system = (now.system - was.system) / tasks;
      process.stdout.write(
        `  ${name.padEnd(13)} ${(user + system).toFixed(3)} (${user.toFixed(3)} + ${system.toFixed(3)})\n`,
      );
    }

    // 2. The same under MONITOR, from a separate process.
    const redisPort = Number(new URL(taskgate.redisServer.url).port);
    const cli = process.env.REDIS_CLI_BIN ?? 'redis-cli';
    const monitor = spawn('sh', ['-c', 'exec "$0" -p "$1" monitor > "$2"', cli, String(redisPort), monitorFile], {
      stdio: 'ignore',
    });
    processes.add('redis-cli monitor', async () => void monitor.kill());
    await sleep(300);
    // The clocks line up through ECHOs whose send and reply the bench times.
    const probe = taskgate.redis.duplicate();
    const echoes: [number, number][] = [];
    for (let i = 0; i < 50; i++) {
      const sent = nowUs();
      await probe.echo(`timeline-${i}`);
      echoes.push([sent, nowUs()]);
    }
    probe.disconnect();
    const marks: { sent: number; created: number; answered: number }[] = [];
    for (let i = 0; i < monitored; i++) {
      const sent = nowUs();
      let created = sent;
      await client.task(() => {
        created = nowUs();
      });
      marks.push({ sent, created, answered: nowUs() });
    }
    await sleep(300);
    monitor.kill();
    await sleep(100);
    const byPort = new Map<number, string>();
    for (const [name, pid] of Object.entries(pids))
      for (const port of localPortsTo(pid, redisPort)) byPort.set(port, name);
    const lines = readFileSync(monitorFile, 'utf8')
      .split('\n')
      .flatMap((line) => parseMonitorLine(line) ?? []);
    const offsets: number[] = [];
    const commands: { t: number; step: string }[] = [];
    for (const { t, port, args } of lines) {
      const echo = (args[0] ?? '').toLowerCase() === 'echo' ? /^timeline-(\d+)$/.exec(args[1] ?? '') : null;
      const timed = echo === null ? undefined : echoes[Number(echo[1])];
      if (timed !== undefined) offsets.push(t - (timed[0] + timed[1]) / 2);
      else if (byPort.has(port)) commands.push({ t, step: `${byPort.get(port)}: ${stepOf(args)}` });
    }
    const offset = median(offsets);
    const steps = new Map<string, number[]>();
    for (const { sent, created, answered } of marks) {
      const seen = new Map<string, number>();
      const events = [
        { t: created, step: 'bench client: tools/call answered' },
        { t: answered, step: 'bench client: tasks/result answered' },
        ...commands
          .filter((c) => c.t - offset >= sent && c.t - offset <= answered)
          .map((c) => ({ t: c.t - offset, step: c.step })),
      ].sort((a, b) => a.t - b.t);
      for (const { t, step } of events) {
        const nth = seen.get(step) ?? 0;
        seen.set(step, nth + 1);
        const name = nth === 0 ? step : `${step} (${nth + 1}.)`;
        steps.set(name, [...(steps.get(name) ?? []), t - sent]);
      }
    }
    process.stdout.write(`\n## ${monitored} tasks under MONITOR: median µs from the client's send of tools/call\n`);
    process.stdout.write(`(each step with the share of tasks that had it; clock offset ${offset.toFixed(0)} µs)\n`);
    const rows = [...steps].filter(([, at]) => at.length >= monitored / 4).sort((a, b) => median(a[1]) - median(b[1]));
    for (const [step, at] of rows) {
      const share = `${Math.round((100 * at.length) / monitored)} %`;
      process.stdout.write(`  ${median(at).toFixed(0).padStart(6)}  ${share.padStart(5)}  ${step}\n`);
    }
  } finally {
    await processes.stopAll();
    rmSync(logDir, { recursive: true, force: true });
  }
  // --profile: the processes wrote their profiles as they stopped.
  if (config.profileDir !== undefined) {
    for (const { process: name, file } of profilesIn(config.profileDir))
      process.stdout.write(`\n${renderTop(name, topSelfTime(file, root, 25))}\n`);
  }
}

await main();
process.exit(0);
