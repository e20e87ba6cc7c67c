/**
 * taskgate's chaos run, the entry point of `bash scripts/chaos [--quick] …` (flags: bench/chaos/config.ts).
 *
 * Starts a private redis-server (append-only file, fsync always) behind Toxiproxy, gateway and worker processes
 * of the `taskgate` CLI whose Redis link goes through Toxiproxy, and HAProxy in front of the gateways; drives a
 * client load through HAProxy; after a fault-free warm-up, injects faults (kill -9, rolling SIGTERM restarts,
 * a Redis restart, toxics on the Redis link) until the deadline; lets in-flight tasks settle for a bounded grace
 * time; reads every acknowledged task back and prints one table, also written as JSON. Exits non-zero when a task
 * is stuck, lost or unreadable, or a progress event was lost or duplicated. Everything it started is stopped by
 * pid, on success, failure, SIGINT and SIGTERM.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProcessSet } from '../lib/processes.js';
import { check, executionsByTask, finalStates } from './checks.js';
import { type ChaosConfig, parseChaosConfig, USAGE } from './config.js';
import { runFaults } from './faults.js';
import { runLoad, type TaskRecord } from './load.js';
import { sleep } from './rpc.js';
import { chaosProblems, renderChaosTable } from './table.js';
import { startChaosTopology } from './topology.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const say = (text: string): void => void process.stderr.write(`${text}\n`);
/** Concurrent task loops per client session. */
const LANES = 3;

async function run(config: ChaosConfig, processes: ProcessSet): Promise<number> {
  const started = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  say(`chaos: starting redis-server, toxiproxy, ${config.gateways} gateways, ${config.workers} workers, haproxy`);
  const topology = await startChaosTopology(config, processes, root);
  say(
    `chaos: ready after ${((Date.now() - started) / 1000).toFixed(1)} s; ${config.sessions} sessions through ${topology.url}`,
  );
  const loadStart = Date.now();
  const faultsFrom = loadStart + config.warmupMs;
  const createUntil = faultsFrom + config.faultsMs;
  const settleUntil = createUntil + config.graceMs;
  const load = runLoad({
    url: topology.url,
    sessions: config.sessions,
    lanes: LANES,
    seed: config.seed,
    phase: () => (Date.now() < faultsFrom ? 'warmup' : 'faults'),
    createUntil,
    settleUntil,
    maxTasks: config.maxTasks,
  });
  let loadFailed: unknown;
  void load.catch((error) => {
    loadFailed = error;
  });
  say(`chaos: warm-up without faults for ${config.warmupMs / 1000} s`);
  await sleep(config.warmupMs);
  say(`chaos: faults for ${config.faultsMs / 1000} s`);
  const faults = await runFaults(topology, config, createUntil, say);
  say(`chaos: faults over; in-flight tasks settle (at most ${config.graceMs / 1000} s)`);
  const stats = await load;
  if (loadFailed !== undefined) throw loadFailed;
  say(`chaos: reading ${stats.tasks.length} acknowledged tasks back with tasks/get`);
  const states = await finalStates(topology.url, stats.tasks, Date.now() + 60_000);
  const executions = executionsByTask(topology.logFiles());
  const checked = check(stats.tasks, states, executions);
  const retries = [...stats.retries.values()].reduce((sum, n) => sum + n, 0);
  const unacknowledged = [...stats.unacknowledged.values()].reduce((sum, n) => sum + n, 0);
  const table = renderChaosTable(checked, faults, {
    retries,
    unacknowledged: String(unacknowledged),
    getOpened: stats.getOpened,
    getResumed: stats.getResumed,
    exits: topology.exits,
  });
  const problems = chaosProblems(checked);
  const command = `bash scripts/chaos ${process.argv.slice(2).join(' ')}`.trim();
  const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; load average ${loadAtStart.toFixed(1)} → ${loadavg()[0]?.toFixed(1)}`;
  process.stdout.write(
    `\n${table}\n\n${command}: seed ${config.seed}, ${config.gateways} gateways, ${config.workers} workers, ${config.sessions} sessions × ${LANES}; ${machine}\n`,
  );
  // Each task the bar is about, with what its client saw: to find out what happened to it.
  const detail = (task: TaskRecord) => ({
    ...task,
    ...states.get(task.taskId),
    executions: executions.get(task.taskId) ?? 0,
    createdAt: task.createdAt - faultsFrom,
    resultAt: task.resultAt === undefined ? undefined : task.resultAt - faultsFrom,
  });
  const anomalous = (task: TaskRecord): boolean =>
    task.kind === 'progress' &&
    states.get(task.taskId)?.status === 'completed' &&
    task.resultAt !== undefined &&
    [1, 2, 3, 4, 5].some((step) => task.inbox.progress[step] !== 1);
  const stuckDetail = stats.tasks.filter((task) => checked.stuckIds.includes(task.taskId)).map(detail);
  const eventDetail = stats.tasks.filter(anomalous).map(detail);
  const missingDetail = stats.tasks.filter((task) => checked.missingIds.includes(task.taskId)).map(detail);
  const record = {
    date: new Date().toISOString(),
    command,
    durationS: Math.round((Date.now() - started) / 1000),
    machine,
    config,
    lanes: LANES,
    table,
    checked: { ...checked, failed: checked.failed },
    /** Times in ms since the faults began (negative: during the warm-up). */
    stuck: stuckDetail,
    eventAnomalies: eventDetail,
    resultsMissing: missingDetail,
    faults,
    retries: Object.fromEntries(stats.retries),
    unacknowledged: Object.fromEntries(stats.unacknowledged),
    sessionsLost: stats.sessionsLost,
    elicitationsAnswered: stats.elicitationsAnswered,
    getStreams: { opened: stats.getOpened, resumed: stats.getResumed },
    problems,
  };
  mkdirSync(dirname(config.json), { recursive: true });
  writeFileSync(config.json, `${JSON.stringify(record, null, 2)}\n`);
  process.stdout.write(`results: ${config.json} (${record.durationS} s)\n`);
  if (stuckDetail.length > 0) say(`chaos: stuck tasks:\n  ${stuckDetail.map((t) => JSON.stringify(t)).join('\n  ')}`);
  if (problems.length > 0) {
    say(`chaos: FAILED:\n  ${problems.join('\n  ')}`);
    return 1;
  }
  return 0;
}

async function main(): Promise<number> {
  let config: ChaosConfig;
  try {
    config = parseChaosConfig(process.argv.slice(2), root);
  } catch (error) {
    const asked = (error as Error).message === USAGE;
    say(asked ? USAGE : `chaos: ${(error as Error).message}\n\n${USAGE}`);
    return asked ? 0 : 2;
  }
  const logDir = mkdtempSync(join(tmpdir(), 'taskgate-chaos-'));
  const processes = new ProcessSet(logDir);
  const interrupted = (signal: NodeJS.Signals): void => {
    say(`chaos: ${signal}: stopping everything it started (logs in ${logDir})`);
    void processes.stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  // Bounded whatever hangs: start-up, the phases, the check, and a margin.
  const deadlineMs = 120_000 + config.warmupMs + config.faultsMs + config.graceMs + 60_000;
  setTimeout(() => {
    say(`chaos: still running after ${Math.round(deadlineMs / 1000)} s: giving up (logs in ${logDir})`);
    void processes.stopAll().finally(() => process.exit(1));
  }, deadlineMs).unref();
  let code = 1;
  try {
    code = await run(config, processes);
  } catch (error) {
    say(`chaos failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    await processes.stopAll();
    if (code !== 0) say(`chaos: process logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
  return code;
}

process.exit(await main());
