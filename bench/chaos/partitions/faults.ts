/**
 * The partition run's faults, one at a time, in an order and with durations drawn from the seed: links cut both
 * ways and one way (iptables in the node's namespace), a lossy link and a slow one, SIGSTOP/SIGCONT pauses, kill -9,
 * and failovers (the primary isolated from the majority, killed after its replication link was cut, or paused
 * past the Sentinels' down-after time). Each fault is healed, then the run waits until the Sentinels name a
 * primary with an online replica and every gateway and worker is ready again, before the next one.
 */
import { seededRandom } from '../config.js';
import { sleep } from '../rpc.js';
import type { Member, PartitionCluster } from './cluster.js';

export const FAULT_KINDS = [
  'gateway isolated from Redis',
  'gateway to Redis one way',
  'Redis to gateway one way',
  'replication link cut',
  'primary isolated, failover',
  'replication cut, primary killed, failover',
  'primary paused, failover',
  'pause gateway',
  'pause worker',
  'pause replica',
  'kill gateway',
  'kill worker',
  'lossy Redis link',
  'slow primary',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
/** The quick run's first round: a partition each way, a replication cut, a failover, a pause and a kill of each side. */
const QUICK_FIRST: readonly FaultKind[] = [
  'gateway isolated from Redis',
  'Redis to gateway one way',
  'replication link cut',
  'replication cut, primary killed, failover',
  'pause worker',
  'pause gateway',
  'kill worker',
  'lossy Redis link',
];

/** One fault: when it began, was healed and the deployment was whole again (ms on the history's clock). */
export interface FaultWindow {
  readonly kind: FaultKind;
  readonly target: string;
  readonly from: number;
  to: number;
  settled: number;
  /** The deployment was not whole again within the bound (the run goes on). */
  unsettled?: boolean;
  /** Another Redis was the primary after it (the Sentinels promoted the replica). */
  failover?: boolean;
}

const pick = <T>(items: readonly T[], random: () => number): T => items[Math.floor(random() * items.length)] as T;

/** Processes stopped now (SIGSTOP): woken before the run stops everything, whatever ended it. */
export const pausedPids = new Set<number>();

function signal(member: Member, name: 'SIGSTOP' | 'SIGCONT' | 'SIGKILL'): void {
  if (name === 'SIGSTOP') pausedPids.add(member.proc.pid);
  else pausedPids.delete(member.proc.pid);
  try {
    process.kill(member.proc.pid, name);
  } catch {
    // already gone
  }
}

/** Runs faults until `until`; every fault is healed before it returns. */
export async function runPartitionFaults(
  cluster: PartitionCluster,
  seed: number,
  quick: boolean,
  until: number,
  now: () => number,
  say: (text: string) => void,
): Promise<FaultWindow[]> {
  const random = seededRandom(seed * 7 + 3);
  const windows: FaultWindow[] = [];
  const { net } = cluster;
  const stores = [...cluster.redis, ...cluster.sentinels].map((member) => member.node);
  const hold = (min: number, spread: number): Promise<void> => sleep(min + Math.floor(random() * spread));
  const shuffled = (kinds: readonly FaultKind[]): FaultKind[] =>
    kinds
      .map((kind) => ({ kind, key: random() }))
      .sort((a, b) => a.key - b.key)
      .map((e) => e.kind);
  // Every kind once per round, in a seeded order (the quick run's first round: QUICK_FIRST).
  let order = shuffled(quick ? QUICK_FIRST : FAULT_KINDS);
  while (Date.now() < until) {
    if (order.length === 0) order = shuffled(FAULT_KINDS);
    const kind = order.shift() as FaultKind;
    const primary = (await cluster.primary()) ?? (cluster.redis[0] as Member);
    const replica = cluster.redis.find((member) => member !== primary) as Member;
    const gateway = pick(cluster.gateways, random);
    const worker = pick(cluster.workers, random);
    const window: FaultWindow = { kind, target: '', from: now(), to: 0, settled: 0 };
    const target = (what: string): void => {
      (window as { target: string }).target = what;
      say(`  ${(window.from / 1000).toFixed(1)} s ${kind}: ${what}`);
    };
    switch (kind) {
      case 'gateway isolated from Redis':
        target(gateway.node.name);
        net.cut(gateway.node, stores, 'both');
        await hold(3000, 3000);
        net.heal(gateway.node);
        break;
      case 'gateway to Redis one way':
        target(`${gateway.node.name} → Redis and Sentinels dropped`);
        net.cut(gateway.node, stores, 'out');
        await hold(3000, 3000);
        net.heal(gateway.node);
        break;
      case 'Redis to gateway one way':
        target(`${primary.node.name} → ${gateway.node.name} dropped`);
        net.cut(gateway.node, [primary.node], 'in');
        await hold(3000, 3000);
        net.heal(gateway.node);
        break;
      case 'replication link cut':
        target(`${primary.node.name} ↔ ${replica.node.name}`);
        net.cut(replica.node, [primary.node], 'both');
        await hold(3000, 3000);
        net.heal(replica.node);
        break;
      case 'primary isolated, failover': {
        // The old primary keeps the first gateway and worker; the replica, the Sentinels and the rest move on.
        const majority = [
          replica.node,
          ...cluster.sentinels.map((m) => m.node),
          ...cluster.gateways.slice(1).map((m) => m.node),
          ...cluster.workers.slice(1).map((m) => m.node),
        ];
        target(`${primary.node.name} with g1 and w1 cut from the rest`);
        net.cut(primary.node, majority, 'both');
        await hold(6000, 2000);
        net.heal(primary.node);
        break;
      }
      case 'replication cut, primary killed, failover':
        target(`${primary.node.name} ↔ ${replica.node.name} cut, then ${primary.node.name} killed`);
        net.cut(replica.node, [primary.node], 'both');
        await hold(2000, 2000);
        signal(primary, 'SIGKILL');
        await primary.proc.exited;
        net.heal(replica.node);
        await waitForPrimary(cluster, replica, 15_000);
        await cluster.start(primary);
        break;
      case 'primary paused, failover':
        target(primary.node.name);
        signal(primary, 'SIGSTOP');
        await hold(5000, 2000);
        signal(primary, 'SIGCONT');
        break;
      case 'pause gateway':
        target(gateway.node.name);
        signal(gateway, 'SIGSTOP');
        await hold(2000, 4000);
        signal(gateway, 'SIGCONT');
        break;
      case 'pause worker':
        // Longer than the lock (3 s): its jobs count as stalled and go to the other worker.
        target(worker.node.name);
        signal(worker, 'SIGSTOP');
        await hold(4000, 3000);
        signal(worker, 'SIGCONT');
        break;
      case 'pause replica':
        target(replica.node.name);
        signal(replica, 'SIGSTOP');
        await hold(2000, 3000);
        signal(replica, 'SIGCONT');
        break;
      case 'kill gateway':
      case 'kill worker': {
        const member = kind === 'kill gateway' ? gateway : worker;
        target(`${member.node.name} (pid ${member.proc.pid}), started again`);
        signal(member, 'SIGKILL');
        await member.proc.exited;
        await cluster.start(member);
        break;
      }
      case 'lossy Redis link':
        target(`${gateway.node.name}: every 3rd packet from Redis dropped`);
        net.lossy(gateway.node, [primary.node], 3);
        await hold(3000, 3000);
        net.heal(gateway.node);
        break;
      case 'slow primary':
        target(`${primary.node.name} sends at 64 kbit/s`);
        net.slow(primary.node, 64);
        await hold(3000, 3000);
        net.heal(primary.node);
        break;
    }
    window.to = now();
    const whole = await cluster.settled(25_000);
    window.settled = now();
    if ((await cluster.primary()) !== primary) window.failover = true;
    if (!whole) {
      window.unsettled = true;
      say(`  ${(window.settled / 1000).toFixed(1)} s not whole again 25 s after ${kind}`);
    }
    windows.push(window);
    await sleep(1000);
  }
  return windows;
}

async function waitForPrimary(cluster: PartitionCluster, member: Member, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await cluster.primary()) === member) return true;
    await sleep(250);
  }
  return false;
}
