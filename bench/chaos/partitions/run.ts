/**
 * The partition run, the entry point of `bash scripts/chaos --partitions [--quick] …` (flags: ./config.ts).
 *
 * Builds a bridge and one network namespace per process (./netns.ts, ./cluster.ts), drives client lanes that
 * record every operation (./client.ts, ./history.ts), runs one seeded fault at a time (./faults.ts), reads every
 * acknowledged task back, and checks the history (./check.ts): prints the tables, writes the record as JSON and
 * the history as JSON lines. Exits non-zero when a check fails. Everything it made — processes (by pid),
 * namespaces, veths, the bridge — is removed on success, failure, SIGINT, SIGTERM and its own deadline. Where
 * network namespaces cannot be made it says so and exits 0 with a SKIPPED line.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProcessSet } from '../../lib/processes.js';
import { executionsByTask } from '../checks.js';
import { exchange, headers, responseTo, sleep } from '../rpc.js';
import { checkPartitionHistory } from './check.js';
import { runClients } from './client.js';
import { rev2026Answer, rev2026Post, rev2026Read } from './client-rev2026.js';
import { type PartitionCluster, startPartitionCluster } from './cluster.js';
import { PARTITIONS_USAGE, type PartitionConfig, parsePartitionConfig } from './config.js';
import { pausedPids, runPartitionFaults } from './faults.js';
import { HistoryWriter, type Op, parseHistory } from './history.js';
import { netnsUnavailable, RunNetwork } from './netns.js';
import { partitionProblems, renderPartitionTables } from './report.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const say = (text: string): void => void process.stderr.write(`${text}\n`);
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * Reads every acknowledged task with tasks/get until it is terminal or `until`; the last read is kind `final`.
 * A task waiting for input gets its answer (2026-07-28 `tasks/update`), as a client would give it.
 */
async function readBack(cluster: PartitionCluster, history: HistoryWriter, ops: readonly Op[], until: number) {
  const created = ops.filter((op) => op.kind === 'create' && op.outcome === 'ok');
  const principalOf = new Map<string, number>();
  for (const op of created)
    principalOf.set(op.taskId as string, Number(op.process.split('-')[1]) % cluster.tokens.length);
  const sessions = new Map<number, string>();
  const url = cluster.urls[0] as string;
  const auth = (p: number) => ({ Authorization: `Bearer ${cluster.tokens[p]}` });
  let rpc = 1;
  const session = async (p: number): Promise<string | undefined> => {
    // The last read of a task goes out after `until` too: it needs a session then as well.
    for (let s = sessions.get(p); Date.now() < until + 10_000; s = sessions.get(p)) {
      if (s !== undefined) return s;
      const init = await exchange(url, {
        method: 'POST',
        headers: headers(undefined, auth(p)),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'final', version: '1' } },
        }),
        signal: AbortSignal.timeout(5000),
      });
      if (init.sessionId !== undefined) sessions.set(p, init.sessionId);
      else await sleep(500);
    }
    return undefined;
  };
  /** One read of a task; recorded as its final read when it is terminal (or unknown), or when `last`. */
  const read = async (taskId: string, last: boolean): Promise<string | undefined> => {
    const p = principalOf.get(taskId) as number;
    const sessionId = await session(p);
    const id = rpc++;
    const invoke = history.now();
    const answer = await exchange(url, {
      method: 'POST',
      headers: headers(sessionId, auth(p)),
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tasks/get', params: { taskId } }),
      signal: AbortSignal.timeout(5000),
    });
    const response = responseTo(answer.messages, id);
    const status =
      typeof response?.result?.status === 'string'
        ? response.result.status
        : response?.error?.code === -32602
          ? 'unknown'
          : undefined;
    const settled = status !== undefined && (TERMINAL.has(status) || status === 'unknown');
    history.record({
      process: 'final',
      kind: last || settled ? 'final' : 'get',
      taskId,
      invoke,
      complete: history.now(),
      ...(status !== undefined
        ? { outcome: 'ok', status: status as Op['status'] }
        : { outcome: 'info', error: `HTTP ${answer.status}` }),
    } as Op);
    if (answer.status === 404) sessions.delete(p);
    return settled ? undefined : status;
  };
  /** Answers the task's question (2026-07-28 `tasks/update`), once a read saw the task ask. */
  const answerQuestion = async (taskId: string): Promise<void> => {
    const token = cluster.tokens[principalOf.get(taskId) as number] as string;
    const invoke = history.now();
    const params = { taskId, inputResponses: rev2026Answer() };
    const seen = rev2026Read('update', await rev2026Post(url, token, 'tasks/update', params, 5000));
    history.record({
      process: 'final',
      kind: 'update',
      rev2026: true,
      taskId,
      invoke,
      complete: history.now(),
      ...seen,
    } as Op);
  };
  /** Runs `each` over `ids`, eight at a time. */
  const eightAtATime = async (ids: readonly string[], each: (taskId: string) => Promise<void>): Promise<void> => {
    let next = 0;
    const lane = async (): Promise<void> => {
      for (let i = next++; i < ids.length; i = next++) await each(ids[i] as string);
    };
    await Promise.all(Array.from({ length: 8 }, lane));
  };
  // Rounds until every task is terminal or the grace ends: each reads every task still open once and answers
  // the question of each one that asks (a question only a read shows: a queued task asks when a worker runs it).
  let open = created.map((op) => op.taskId as string);
  while (open.length > 0 && Date.now() < until) {
    const still: string[] = [];
    await eightAtATime(open, async (taskId) => {
      const status = await read(taskId, false);
      if (status === undefined) return;
      still.push(taskId);
      if (status === 'input_required') await answerQuestion(taskId);
    });
    open = still;
    if (open.length > 0) await sleep(500);
  }
  // The last read of every task still open, recorded as its final state.
  await eightAtATime(open, async (taskId) => void (await read(taskId, true)));
  history.flush();
}

/** Task ids whose gateway logged that enqueuing their job failed (the task is then `failed`, or refused). */
function unqueuedTasks(gatewayLogs: readonly string[]): Set<string> {
  const ids = new Set<string>();
  for (const file of gatewayLogs) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.includes('enqueuing a tool job failed')) continue;
      const id = /"taskId":"([^"]+)"/.exec(line)?.[1];
      if (id !== undefined) ids.add(id);
    }
  }
  return ids;
}

/** One line of a task's operation, for a failure's report: times (ms into the run), lane, gateway, outcome. */
function describeOp(op: Op, taskId: string): string {
  const seen = op.kind === 'list' ? op.seen?.find((entry) => entry.taskId === taskId)?.status : op.status;
  const what = [op.outcome, seen, op.refused === true ? 'refused' : undefined, op.text, op.error];
  const where = `${op.process}${op.gateway === undefined ? '' : ` via g${op.gateway + 1}`}`;
  return `${Math.round(op.invoke)}–${Math.round(op.complete)} ms ${op.kind} (${where}): ${what.filter(Boolean).join(' ')}`;
}

async function run(config: PartitionConfig, processes: ProcessSet, net: RunNetwork): Promise<number> {
  const started = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  say(`partitions: bridge ${net.bridge}, ${net.subnet}.0/24, namespaces tgp${net.id}-*`);
  const cluster = await startPartitionCluster(config, processes, root, net);
  if (!(await cluster.settled(30_000))) throw new Error('the deployment was not whole 30 s after its start');
  say(`partitions: ready after ${((Date.now() - started) / 1000).toFixed(1)} s (${config.replication} replication)`);
  mkdirSync(dirname(config.history), { recursive: true });
  const history = new HistoryWriter(config.history);
  const faultsFrom = Date.now() + config.warmupMs;
  const faultsUntil = faultsFrom + config.faultsMs;
  const clients = runClients({
    urls: cluster.urls,
    tokens: cluster.tokens,
    lanes: config.lanes,
    seed: config.seed,
    history,
    until: faultsUntil,
  });
  await sleep(config.warmupMs);
  say(`partitions: faults for ${config.faultsMs / 1000} s, one at a time`);
  const windows = await runPartitionFaults(cluster, config.seed, config.quick, faultsUntil, () => history.now(), say);
  await clients;
  net.healAll();
  say(`partitions: faults over; tasks settle (at most ${config.graceMs / 1000} s), then every one is read back`);
  await cluster.settled(30_000);
  history.flush();
  await readBack(cluster, history, parseHistory(readFileSync(config.history, 'utf8')), Date.now() + config.graceMs);
  const ops = parseHistory(readFileSync(config.history, 'utf8'));
  const workerLogs = cluster.logFiles().filter((file) => /\/w\d+\.\d+\.log$/.test(file));
  const gatewayLogs = cluster.logFiles().filter((file) => /\/g\d+\.\d+\.log$/.test(file));
  const checked = checkPartitionHistory(
    ops,
    executionsByTask(workerLogs),
    windows,
    config.replication,
    unqueuedTasks(gatewayLogs),
  );
  const tables = renderPartitionTables(checked, windows);
  const problems = partitionProblems(checked, config.replication);
  const command = `bash scripts/chaos ${process.argv.slice(2).join(' ')}`.trim();
  const machine = `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; load average ${loadAtStart.toFixed(1)} → ${loadavg()[0]?.toFixed(1)}`;
  const durationS = Math.round((Date.now() - started) / 1000);
  process.stdout.write(
    `\n${tables}\n\n${command}: seed ${config.seed}, ${config.replication} replication, ${config.gateways} gateways, ${config.workers} workers, ${config.lanes} lanes; ${machine}; ${durationS} s\n`,
  );
  const record = {
    date: new Date().toISOString(),
    command,
    durationS,
    machine,
    config,
    tables,
    checked: { ...checked, anomalous: checked.anomalous.slice(0, 50) },
    faults: windows,
    history: config.history,
    problems,
  };
  mkdirSync(dirname(config.json), { recursive: true });
  writeFileSync(config.json, `${JSON.stringify(record, null, 2)}\n`);
  process.stdout.write(`results: ${config.json}; history: ${config.history} (${ops.length} operations)\n`);
  if (problems.length > 0) {
    say(`partitions: FAILED:\n  ${problems.join('\n  ')}`);
    for (const task of checked.anomalous.filter((anomaly) => anomaly.class === 'violation').slice(0, 3)) {
      say(`partitions: ${task.taskId} (${task.kinds.join(', ')}; during ${task.faults.join(', ') || 'no fault'}):`);
      for (const op of task.ops) say(`  ${describeOp(op, task.taskId)}`);
    }
    return 1;
  }
  if (config.replication === 'async' && checked.notLinearizable + checked.lost + checked.stuck > 0) {
    say(
      `partitions: asynchronous replication: ${checked.notLinearizable} anomalous tasks, ${checked.lost} lost, ${checked.stuck} stuck (expected: not promised)`,
    );
  }
  return 0;
}

async function main(): Promise<number> {
  let config: PartitionConfig;
  try {
    config = parsePartitionConfig(process.argv.slice(2), root);
  } catch (error) {
    const asked = (error as Error).message === PARTITIONS_USAGE;
    say(asked ? PARTITIONS_USAGE : `partitions: ${(error as Error).message}\n\n${PARTITIONS_USAGE}`);
    return asked ? 0 : 2;
  }
  const why = netnsUnavailable();
  if (why !== undefined) {
    say(`\n*** partitions: SKIPPED — network namespaces cannot be made here: ${why}. Nothing was checked. ***\n`);
    process.stdout.write(`SKIPPED: bash scripts/chaos --partitions (${why})\n`);
    return 0;
  }
  const logDir = mkdtempSync(join(tmpdir(), 'taskgate-partitions-'));
  const processes = new ProcessSet(logDir);
  const net = new RunNetwork();
  let cleaned: Promise<void> | undefined;
  const cleanUp = (): Promise<void> => {
    cleaned ??= (async () => {
      // A stopped process ignores SIGTERM until it runs again: wake every one first.
      for (const pid of pausedPids) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // gone
        }
      }
      await processes.stopAll();
      net.destroy();
    })();
    return cleaned;
  };
  const interrupted = (signal: NodeJS.Signals): void => {
    say(`partitions: ${signal}: removing everything it made (logs in ${logDir})`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const deadlineMs = 90_000 + config.warmupMs + config.faultsMs + 60_000 + config.graceMs + 60_000;
  setTimeout(() => {
    say(`partitions: still running after ${Math.round(deadlineMs / 1000)} s: giving up (logs in ${logDir})`);
    void cleanUp().finally(() => process.exit(1));
  }, deadlineMs).unref();
  let code = 1;
  try {
    code = await run(config, processes, net);
  } catch (error) {
    say(`partitions failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    await cleanUp();
    if (code !== 0) say(`partitions: process logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
  return code;
}

process.exit(await main());
