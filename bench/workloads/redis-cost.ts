import type { Redis } from 'ioredis';
import { cpuMs } from '../lib/proc-stats.js';
import {
  callsDelta,
  commandCalls,
  info,
  type MonitorCounts,
  monitorCommands,
  topCounts,
  total,
} from '../lib/redis-stats.js';
import { closedLoop } from '../lib/stats.js';
import type { Subject } from '../systems/mcp-subject.js';

/** e. What one task costs Redis. */
export interface CostResult {
  readonly tasks: number;
  /** INFO commandstats delta per task (commands Lua scripts ran included), idle traffic subtracted. */
  readonly commandsPerTask: number;
  /** Commands clients sent per task (MONITOR, second pass): what crosses the network. */
  readonly topLevelPerTask: number;
  /** Commands Lua scripts ran per task (MONITOR, second pass). */
  readonly luaPerTask: number;
  /** used_memory growth per task: what stays in Redis after the task (records, indexes, completed jobs). */
  readonly memoryBytesPerTask: number;
  readonly netInBytesPerTask: number;
  readonly netOutBytesPerTask: number;
  /** Commands per second with no load (heartbeats, stalled-job checks), subtracted above. */
  readonly idleCommandsPerSecond: number;
  /** The most frequent commands per task, top-level and from Lua. */
  readonly topLevelBreakdown: string;
  readonly luaBreakdown: string;
  /**
   * Commands the redis-server ran per second of its own CPU time during the plain pass (`redisPid` given): the
   * rate one master sustains on one core, which the capacity table divides by the commands per task.
   */
  readonly commandsPerCpuSecond?: number;
}

const IN_FLIGHT = 50;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const num = (fields: Record<string, string>, name: string): number => Number(fields[name] ?? Number.NaN);

async function load(subject: Subject, tasks: number): Promise<number> {
  const result = await closedLoop({
    inFlight: IN_FLIGHT,
    total: tasks,
    maxMs: 300_000,
    run: (lane) => subject.run(lane),
  });
  if (result.errors > 0 || result.n !== tasks) throw new Error(`${subject.name}: ${result.errors} of ${tasks} failed`);
  return result.elapsedMs;
}

/**
 * Runs `tasks` create → result operations at 50 in flight twice against one subject's private Redis:
 * first plain (INFO commandstats, memory and network deltas), then under MONITOR with half as many tasks, to
 * tell commands sent by clients from commands run inside Lua scripts.
 */
export async function runRedisCost(
  subject: Subject,
  redis: Redis,
  tasks: number,
  redisPid?: number,
): Promise<CostResult> {
  await subject.prepare(Math.ceil(IN_FLIGHT / 25));
  await load(subject, IN_FLIGHT * 2);

  const idle0 = await commandCalls(redis);
  const idleStart = performance.now();
  await sleep(2000);
  const idleRate = (total(callsDelta(idle0, await commandCalls(redis))) / (performance.now() - idleStart)) * 1000;

  const [calls0, mem0, net0] = [await commandCalls(redis), await info(redis, 'memory'), await info(redis, 'stats')];
  const redisCpu0 = redisPid === undefined ? 0 : cpuMs(redisPid);
  const elapsedMs = await load(subject, tasks);
  const redisCpu = redisPid === undefined ? 0 : cpuMs(redisPid) - redisCpu0;
  await sleep(250);
  const [calls1, mem1, net1] = [await commandCalls(redis), await info(redis, 'memory'), await info(redis, 'stats')];
  const ran = total(callsDelta(calls0, calls1));
  const commands = ran - (idleRate * (elapsedMs + 250)) / 1000;

  const monitored = Math.max(50, Math.floor(tasks / 2));
  const monitor = await monitorCommands(redis);
  await load(subject, monitored);
  await sleep(250);
  const counts: MonitorCounts = await monitor.stop();

  return {
    tasks,
    commandsPerTask: commands / tasks,
    topLevelPerTask: total(counts.topLevel) / monitored,
    luaPerTask: total(counts.lua) / monitored,
    memoryBytesPerTask: (num(mem1, 'used_memory') - num(mem0, 'used_memory')) / tasks,
    netInBytesPerTask: (num(net1, 'total_net_input_bytes') - num(net0, 'total_net_input_bytes')) / tasks,
    netOutBytesPerTask: (num(net1, 'total_net_output_bytes') - num(net0, 'total_net_output_bytes')) / tasks,
    idleCommandsPerSecond: idleRate,
    topLevelBreakdown: topCounts(counts.topLevel, 12, monitored),
    luaBreakdown: topCounts(counts.lua, 12, monitored),
    ...(redisCpu > 0 && { commandsPerCpuSecond: (ran / redisCpu) * 1000 }),
  };
}
