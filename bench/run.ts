/**
 * taskgate's benchmark, side by side with raw BullMQ (the floor) and the MCP TypeScript SDK's in-memory task
 * server (the anchor). Entry point of `bash scripts/bench [--quick] …` (see bench/lib/config.ts for flags).
 *
 * Starts private redis-servers, taskgate gateway and worker processes, the anchor process and a raw BullMQ
 * worker process; drives workloads a–e; prints one Markdown table with absolute figures, ratios and each
 * target's verdict; workload f (`--cluster`) runs the same task load on one redis-server and on a 3-master
 * Redis Cluster and prints a table of its own, a column per shard; writes everything as JSON under bench/results/. Exits non-zero when a figure is missing
 * or not sane (a missed target is reported, not an error). Every process it started is stopped by pid.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchConfig, parseConfig, USAGE } from './lib/config.js';
import { ProcessSet } from './lib/processes.js';
import { profilesIn, renderTop, topSelfTime } from './lib/profile.js';
import { info } from './lib/redis-stats.js';
import { type BenchResults, buildRows, renderTable, sanityProblems } from './lib/report.js';
import { buildBeforeRows, renderBeforeTable } from './lib/report-before.js';
import { buildCapacityRows, gbPerMillionTasks, renderCapacityTable } from './lib/report-capacity.js';
import { buildShardRows, renderShardTable, type ShardRow } from './lib/report-shards.js';
import { startAnchor } from './systems/anchor.js';
import { startBullmq } from './systems/bullmq.js';
import { fastmcpVersions, startFastmcp } from './systems/fastmcp.js';
import type { Subject } from './systems/mcp-subject.js';
import { startTaskgate, type TaskgateSystem } from './systems/taskgate.js';
import { type BeforeTree, prepareBefore, startBefore } from './systems/taskgate-before.js';
import { type ShardedTaskgate, startTaskgateCluster, startTaskgateSingle } from './systems/taskgate-cluster.js';
import { runLatency, runThroughput } from './workloads/latency.js';
import { runListPages } from './workloads/list-pages.js';
import { runRedisCost } from './workloads/redis-cost.js';
import { runShards, type ShardsResult } from './workloads/shards.js';
import { runSseFloor, runWaiters, type WaitersResult } from './workloads/waiters.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const say = (text: string): void => void process.stderr.write(`${text}\n`);

function versionOf(pkg: string): string {
  const json = JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string };
  return json.version;
}

/** The queue shards of workload f's third run: one tool over this many queues on the 3-master cluster. */
const F_QUEUE_SHARDS = 3;

/**
 * f. The same load on a single redis-server, on a 3-master cluster, then on that cluster with the one tool over
 * three queue shards; each stopped before the next starts.
 */
async function runSingleBesideCluster(
  config: BenchConfig,
  processes: ProcessSet,
): Promise<{ f: NonNullable<BenchResults['f']>; redis: string }> {
  const { owners, tasks, inFlight } = config.shards;
  say(
    `f. single node beside a Redis Cluster (3 masters): ${tasks} tasks at ${inFlight} in flight over ${owners} owners`,
  );
  const measured: ShardsResult[] = [];
  let redis = 'unknown';
  const starts = [
    startTaskgateSingle,
    startTaskgateCluster,
    (c: BenchConfig, p: ProcessSet, r: string) => startTaskgateCluster(c, p, r, F_QUEUE_SHARDS),
  ];
  for (const start of starts) {
    const target: ShardedTaskgate = await start(config, processes, root);
    try {
      const first = target.shards[0];
      if (first !== undefined) redis = (await info(first.redis, 'server')).redis_version ?? redis;
      const result = await runShards(target, config.shards);
      measured.push(result);
      say(
        `  ${result.topology}: n=${result.tasks} ${result.throughput.toFixed(0)}/s p50=${result.p50.toFixed(2)} ms, ${result.commandsPerTask.toFixed(1)} commands/task` +
          (result.errors > 0 ? ` errors=${result.errors}` : '') +
          (result.executions === undefined
            ? ''
            : `; ${result.executions.tasks} tasks executed for ${result.completed} completed, ${result.executions.repeated} more than once`),
      );
      for (const shard of result.shards) {
        const { all, owner, bullmq, other } = shard.keys;
        say(
          `    ${shard.address}: ${shard.commandsPerTask.toFixed(1)} commands/task, ${all} keys (${owner} per-owner, ${bullmq} BullMQ, ${other} other)`,
        );
        say(`      ${shard.breakdown}`);
      }
    } finally {
      await target.stop();
    }
  }
  const [single, cluster, sharded] = measured as [ShardsResult, ShardsResult, ShardsResult];
  return { f: { single, cluster, sharded }, redis };
}

async function runAll(
  config: BenchConfig,
  processes: ProcessSet,
  beforeTree: BeforeTree | undefined,
): Promise<{ results: BenchResults; redis: string }> {
  const results: BenchResults = {};
  let redis = 'unknown';
  // f first, on systems of its own, before anything else loads the machine.
  if (config.only.has('f')) ({ f: results.f, redis } = await runSingleBesideCluster(config, processes));
  if ([...config.only].every((id) => id === 'f')) return { results, redis };
  const needsFloor = config.only.has('a') || config.only.has('b') || config.only.has('e');
  const needsAnchor = config.only.has('a') || config.only.has('b');
  const needsFastmcp = needsFloor && config.fastmcp;
  say(
    `starting: taskgate (${config.gateways} gateway, ${config.workers} worker process(es))${needsFloor ? ', raw BullMQ' : ''}${needsAnchor ? ', anchor' : ''}${needsFastmcp ? ', FastMCP+Docket' : ''}`,
  );
  // --before: the earlier commit's taskgate runs in a and b only, stopped before the rest.
  const runsBefore = beforeTree !== undefined && needsAnchor;
  const [taskgate, before, bullmq, anchor, fastmcp] = await Promise.all([
    startTaskgate(config, processes, root),
    runsBefore ? startBefore(config, processes, beforeTree) : Promise.resolve(undefined),
    needsFloor ? startBullmq(config, processes, root) : Promise.resolve(undefined),
    needsAnchor ? startAnchor(processes, root) : Promise.resolve(undefined),
    needsFastmcp ? startFastmcp(config, processes, root) : Promise.resolve(undefined),
  ]);
  redis = (await info(taskgate.redis, 'server')).redis_version ?? redis;
  // The official SDK client (BullMQ: its own producer), then the lean load generator.
  const subjects: Subject[] = [taskgate.subject];
  if (before !== undefined) subjects.push(before.subject);
  if (bullmq !== undefined) subjects.push(bullmq.subject);
  if (anchor !== undefined) subjects.push(anchor.subject);
  const leanSubjects: Subject[] = [taskgate.lean];
  if (before !== undefined) leanSubjects.push(before.lean);
  if (anchor !== undefined) leanSubjects.push(anchor.lean);
  if (fastmcp !== undefined) leanSubjects.push(fastmcp.lean);

  if (config.only.has('a')) {
    say('a. create → result latency, 1 in flight (SDK client)');
    ({ latency: results.a, floor: results.aFloor } = await runLatency(subjects, config));
    say('a. create → result latency, 1 in flight (lean client; FastMCP: polls tasks/get at its pollInterval)');
    // Raw BullMQ (its own producer) again, in the same rounds: the lean row's target is a ratio to it.
    const leanA = bullmq === undefined ? leanSubjects : [...leanSubjects, bullmq.subject];
    ({ latency: results.aLean, floor: results.aLeanFloor } = await runLatency(leanA, config));
  }
  if (config.only.has('b')) {
    say('b. throughput and latency, many in flight (SDK client)');
    results.b = await runThroughput(subjects, config);
    say('b. throughput and latency, many in flight (lean client)');
    results.bLean = await runThroughput(leanSubjects, config);
  }
  await anchor?.process.stop();
  if (before !== undefined) await stopSystem(before);
  if (config.only.has('e') && bullmq !== undefined) {
    say(`e. Redis cost per task (${config.costTasks} tasks at 50 in flight)`);
    const tg = await runRedisCost(taskgate.lean, taskgate.redis, config.costTasks, taskgate.redisServer.pid);
    const bq = await runRedisCost(bullmq.subject, bullmq.redis, config.costTasks);
    results.e = { taskgate: tg, bullmq: bq };
    if (fastmcp !== undefined) {
      say(`  FastMCP+Docket: ${config.fastmcpCostTasks} tasks (each waits its 5 s pollInterval)`);
      results.e.fastmcp = await runRedisCost(fastmcp.lean, fastmcp.redis, config.fastmcpCostTasks);
    }
    for (const [name, cost] of Object.entries(results.e)) {
      say(
        `  ${name}: ${cost.commandsPerTask.toFixed(1)} commands/task (${cost.topLevelPerTask.toFixed(1)} sent, ${cost.luaPerTask.toFixed(1)} in Lua)`,
      );
      say(`    sent: ${cost.topLevelBreakdown}`);
      say(`    Lua:  ${cost.luaBreakdown}`);
    }
  }
  await bullmq?.worker.stop();
  await Promise.all([fastmcp?.server.stop(), fastmcp?.worker.stop()]);
  await taskgate.subject.close();
  if (config.only.has('c')) {
    say(`c. ${config.waiters} blocked tasks/result waiters on one gateway`);
    const waited = await runWaiters(taskgate, config.waiters, processes, root);
    const floorRssGrowthMb = await runSseFloor(processes, root, config.waiters);
    const c = { ...waited, floorRssGrowthMb };
    results.c = c;
    sayWaiters(c);
    say('c. the same from a session without a GET stream (raw HTTP), on a fresh gateway: quiet streams');
    const quiet = await runWaiters(taskgate, config.waiters, processes, root, 'no-get', config.profileDir);
    results.cNoGet = { ...quiet, floorRssGrowthMb };
    sayWaiters(results.cNoGet);
  }
  if (config.only.has('d')) {
    say(`d. tasks/list pages with ${config.listSizes.join(', ')} tasks for one owner`);
    results.d = await runListPages(taskgate, config.listSizes, config.listSamples);
  }
  // A process writes its CPU profile when it exits.
  if (config.profileDir !== undefined) {
    await Promise.all([...taskgate.gateways, ...taskgate.workers].map((proc) => proc.stop(15_000)));
  }
  return { results, redis };
}

/** A taskgate's processes and Redis, stopped before the next workload (its clients close with the rest). */
async function stopSystem(system: TaskgateSystem): Promise<void> {
  await Promise.all([...system.gateways, ...system.workers].map((proc) => proc.stop()));
  system.redis.disconnect();
  await system.redisServer.stop();
}

// undici's fetch (under the SDK client) removes its abort listener from the transport's shared signal only
// when a request is garbage-collected, so a long run trips Node's listener-leak warning. It is noise here.
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  if (warning.name !== 'MaxListenersExceededWarning') say(`${warning.name}: ${warning.message}`);
});

async function main(): Promise<number> {
  let config: BenchConfig;
  try {
    config = parseConfig(process.argv.slice(2), root);
  } catch (error) {
    const asked = (error as Error).message === USAGE;
    say(asked ? USAGE : `bench: ${(error as Error).message}\n\n${USAGE}`);
    return asked ? 0 : 2;
  }
  // --profile: this run's profiles only.
  if (config.profileDir !== undefined) rmSync(config.profileDir, { recursive: true, force: true });
  const logDir = mkdtempSync(join(tmpdir(), 'taskgate-bench-'));
  const processes = new ProcessSet(logDir);
  const interrupted = (signal: NodeJS.Signals): void => {
    say(`bench: ${signal}: stopping everything it started`);
    void processes.stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  // A hung connection must not hang CI: past the deadline, stop everything and fail.
  const deadlineS = config.quick ? 360 : 2700;
  setTimeout(() => {
    say(`bench: still running after ${deadlineS} s: giving up (logs in ${logDir})`);
    void processes.stopAll().finally(() => process.exit(1));
  }, deadlineS * 1000).unref();
  const started = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  let failed = true;
  try {
    const beforeTree = config.before === undefined ? undefined : prepareBefore(root, config.before);
    // This checkout's name in the before/after table (asked of git only then: a plain copy runs without it).
    const after =
      beforeTree === undefined
        ? ''
        : execFileSync('git', ['-C', root, 'describe', '--always', '--dirty'], { encoding: 'utf8' }).trim();
    const { results, redis } = await runAll(config, processes, beforeTree);
    const rows = buildRows(results);
    const beforeRows = beforeTree === undefined ? [] : buildBeforeRows(results);
    const shardRows: ShardRow[] =
      results.f === undefined ? [] : buildShardRows(results.f.single, results.f.cluster, results.f.sharded);
    const capacityRows = buildCapacityRows(results);
    const tables = [
      ...(rows.length > 0 ? [renderTable(rows)] : []),
      ...(capacityRows.length > 0 ? [renderCapacityTable(capacityRows, gbPerMillionTasks(results))] : []),
      ...(results.f === undefined ? [] : [renderShardTable(shardRows, results.f.cluster)]),
      ...(beforeTree === undefined ? [] : [renderBeforeTable(beforeRows, beforeTree.sha.slice(0, 7), after)]),
    ];
    const cpu = cpus();
    const machine = {
      /** 1-minute load average at the start and the end: other work on the machine skews every figure. */
      load: `${loadAtStart.toFixed(1)} → ${loadavg()[0]?.toFixed(1)}`,
      cores: cpu.length,
      cpu: cpu[0]?.model ?? 'unknown',
      ramGb: Number((totalmem() / 1024 ** 3).toFixed(1)),
      node: process.version,
      redis,
      bullmq: versionOf('bullmq'),
      sdk: versionOf('@modelcontextprotocol/sdk'),
      ...(config.fastmcp && { fastmcp: fastmcpVersions(root) }),
    };
    const command = `bash scripts/bench ${process.argv.slice(2).join(' ')}`.trim();
    process.stdout.write(`\n${tables.join('\n\n')}\n\n`);
    process.stdout.write(
      `machine: ${machine.cores} cores (${machine.cpu}), ${machine.ramGb} GB RAM, Node ${machine.node}, Redis ${machine.redis}, BullMQ ${machine.bullmq}, MCP SDK ${machine.sdk}${machine.fastmcp === undefined ? '' : `, ${machine.fastmcp}`}; load average ${machine.load}\n`,
    );
    const profiles =
      config.profileDir === undefined
        ? []
        : profilesIn(config.profileDir).map(({ process: name, file }) => ({
            process: name,
            file,
            top: topSelfTime(file, root),
          }));
    for (const { process: name, top } of profiles) process.stdout.write(`${renderTop(name, top)}\n\n`);
    const verdicts = [...rows, ...shardRows].filter((row) => row.verdict !== undefined);
    for (const row of verdicts) process.stdout.write(`${row.verdict}  ${row.metric}: ${row.target}\n`);
    const problems = sanityProblems(results, config.only);
    const record = {
      date: new Date().toISOString(),
      command,
      durationS: Math.round((Date.now() - started) / 1000),
      machine,
      config: { ...config, only: [...config.only] },
      results,
      rows,
      ...(capacityRows.length > 0 && { capacityRows }),
      ...(shardRows.length > 0 && { shardRows }),
      ...(beforeTree !== undefined && { before: { commit: beforeTree.sha, after, rows: beforeRows } }),
      ...(profiles.length > 0 && { profiles }),
      problems,
    };
    mkdirSync(config.outDir, { recursive: true });
    const stamp = record.date.replace(/[:.]/g, '-');
    const clusterOnly = [...config.only].every((id) => id === 'f');
    const suffix = `${config.quick ? '-quick' : ''}${clusterOnly ? '-cluster' : ''}`;
    const body = `${JSON.stringify(record, null, 2)}\n`;
    writeFileSync(join(config.outDir, `bench-${stamp}${suffix}.json`), body);
    writeFileSync(join(config.outDir, `latest${suffix}.json`), body);
    process.stdout.write(`results: ${join(config.outDir, `latest${suffix}.json`)} (${record.durationS} s)\n`);
    if (problems.length > 0) {
      say(`bench: figures missing or not sane:\n  ${problems.join('\n  ')}`);
      return 1;
    }
    failed = false;
    return 0;
  } catch (error) {
    say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  } finally {
    await processes.stopAll();
    if (failed) say(`bench: process logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
}

// Everything started was stopped; leftover keep-alive sockets must not hold the process open.
/** Prints what one run of workload c measured. */
function sayWaiters(c: WaitersResult): void {
  say(
    `  RSS ${c.rssBeforeMb.toFixed(1)} → ${c.rssAfterMb.toFixed(1)} MB (${c.perWaiterKb.toFixed(2)} KB/waiter), ${c.redisConnections} Redis connections, ${c.subscriptions} channels; opened in ${c.openMs.toFixed(0)} ms; idle: gateway at ${(c.idleCpuShare * 100).toFixed(0)} % of a core, ${c.idleCommandsPerSecond.toFixed(0)} Redis commands/s (${c.idleBreakdown}); woken ${c.wakeP50Ms.toFixed(0)} ms (median) / ${c.wakeMaxMs.toFixed(0)} ms (slowest) after their task's end, the last ${c.wakeAllMs.toFixed(0)} ms after the first finish (${c.delivered} results; finishing took ${c.finishAllMs.toFixed(0)} ms; gateway CPU ${c.wakeCpuMsPerWaiter.toFixed(2)} ms per wake)\n  wake: ${c.wakeCommandsPerWaiter.toFixed(1)} Redis commands per waiter: ${c.wakeBreakdown}\n  set-up: ${c.commandsPerWaiter.toFixed(1)} Redis commands per waiter: ${c.setupBreakdown}\n  floor: express alone holding as many SSE requests grew ${c.floorRssGrowthMb.toFixed(1)} MB`,
  );
}

process.exit(await main());
