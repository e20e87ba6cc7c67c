import { rawCall, rawInitialize, sleepMs } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { type Deployment, startDeployment } from './deployment.js';

// Failover under load on a Redis Cluster: a master is killed with SIGKILL while clients create tasks, its
// replica is promoted, and afterwards every task a gateway acknowledged (a CreateTaskResult) is followed to
// its end. Run twice in one test: with asynchronous replication only, and with TASKGATE_REDIS_WAIT_REPLICAS=1,
// where no acknowledged task may be lost.

const CLIENTS = 24;
const LOAD_MS = 4_000;
const KILL_AFTER_MS = 1_500;

interface Tally {
  readonly waitReplicas: number;
  acknowledged: number;
  refused: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** Acknowledged, then unknown to every gateway (-32602): the record was lost with the master. */
  lost: number;
  /** Acknowledged, and still not terminal long after the failover (its job was lost, or its finish). */
  stuck: number;
  /** The statuses the stuck ones last showed (working, or no answer), for the report. */
  stuckAs: Record<string, number>;
}

type Reply = { result?: { task?: { taskId: string }; status?: string }; error?: { code: number } };

const reply = async (response: Promise<Awaited<ReturnType<typeof rawCall>>>): Promise<Reply | undefined> => {
  try {
    const answer = await response;
    if (answer.status !== 200) return undefined;
    const messages = answer.events().length > 0 ? answer.events() : [answer.json()];
    return messages[0] as Reply;
  } catch {
    return undefined;
  }
};

async function runUnderFailover(waitReplicas: number): Promise<Tally> {
  const deployment: Deployment = await startDeployment('cluster', {
    TASKGATE_REDIS_WAIT_REPLICAS: String(waitReplicas),
    TASKGATE_REDIS_WAIT_TIMEOUT_MS: '500',
    TASKGATE_MAX_ACTIVE_TASKS_PER_OWNER: '1000',
  });
  const tally: Tally = {
    waitReplicas,
    acknowledged: 0,
    refused: 0,
    completed: 0,
    failed: 0,
    cancelled: 0,
    lost: 0,
    stuck: 0,
    stuckAs: {},
  };
  const acknowledged: { url: string; sessionId: string; taskId: string; last?: string }[] = [];
  try {
    const cluster = deployment.topology.cluster;
    if (cluster === undefined) throw new Error('not a cluster');
    const [a, b] = deployment.gateways;
    // Each client is its own owner (auth off): its session's slot tag spreads the owners over the shards.
    const sessions = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => rawInitialize(i % 2 === 0 ? a : b)));
    const until = Date.now() + LOAD_MS;
    const clients = sessions.map(async (sessionId, i) => {
      const url = i % 2 === 0 ? a : b;
      while (Date.now() < until) {
        const created = await reply(
          rawCall(url, sessionId, 'tools/call', { name: 'sleep', arguments: { ms: 20 }, task: { ttl: 600_000 } }),
        );
        const taskId = created?.result?.task?.taskId;
        if (taskId === undefined) {
          tally.refused++;
          await sleepMs(50);
        } else {
          tally.acknowledged++;
          acknowledged.push({ url, sessionId, taskId });
        }
      }
    });
    // A master: it holds some owners' tasks, and maybe the tool queue or the catalog.
    await sleepMs(KILL_AFTER_MS);
    const victim = (await cluster.masters())[0] as number;
    await cluster.killMaster(victim);
    await Promise.all(clients);
    await cluster.waitForFailover(victim, 20_000);

    // Follow every acknowledged task until it ends, for at most 45 s after the failover: a job whose run the
    // failover cut short is handed out again after its lock (10 s) and up to two stalled checks (5 s each).
    const deadline = Date.now() + 45_000;
    let open = acknowledged;
    while (open.length > 0 && Date.now() < deadline) {
      const next: typeof open = [];
      for (const task of open) {
        const got = await reply(rawCall(task.url === a ? b : a, task.sessionId, 'tasks/get', { taskId: task.taskId }));
        const status = got?.result?.status;
        if (got?.error?.code === -32602) tally.lost++;
        else if (status === 'completed') tally.completed++;
        else if (status === 'failed') tally.failed++;
        else if (status === 'cancelled') tally.cancelled++;
        else
          next.push({ ...task, last: status ?? (got?.error === undefined ? 'no answer' : `error ${got.error.code}`) });
      }
      open = next;
      if (open.length > 0) await sleepMs(500);
    }
    tally.stuck = open.length;
    for (const task of open) tally.stuckAs[task.last ?? '?'] = (tally.stuckAs[task.last ?? '?'] ?? 0) + 1;
    return tally;
  } finally {
    await deployment.stop();
  }
}

describe('Redis Cluster failover under load', () => {
  it('accounts for every acknowledged task after a master is killed; with WAIT 1 none is lost', async () => {
    const tallies = [await runUnderFailover(0), await runUnderFailover(1)];
    console.table(tallies);
    for (const tally of tallies) {
      expect(tally.acknowledged, JSON.stringify(tally)).toBeGreaterThan(50);
      // Every acknowledged task is accounted for: it ended, or it is counted lost or stuck.
      expect(tally.completed + tally.failed + tally.cancelled + tally.lost + tally.stuck).toBe(tally.acknowledged);
    }
    const [, waited] = tallies as [Tally, Tally];
    expect({ lost: waited.lost, stuck: waited.stuck }, JSON.stringify(waited)).toEqual({ lost: 0, stuck: 0 });
  }, 300_000);
});
