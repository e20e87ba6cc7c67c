import { Redis } from 'ioredis';

/** One line of `CLUSTER NODES`, as a node sees the cluster now. */
export interface ClusterNodeView {
  readonly id: string;
  readonly port: number;
  readonly role: 'master' | 'replica';
  /** The master's node id (replicas), else undefined. */
  readonly masterId: string | undefined;
  /** Flagged `fail` (agreed by the majority) or `fail?` (this node's suspicion). */
  readonly failing: boolean;
  readonly connected: boolean;
  /** Owned slot ranges, `[first, last]` inclusive. */
  readonly slots: readonly (readonly [number, number])[];
}

/** Parses `CLUSTER NODES` (`<id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> <slot>...`). */
export function parseClusterNodes(text: string): ClusterNodeView[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .map((line) => {
      const [id = '', address = '', flags = '', master = '-', , , , link = '', ...slots] = line.split(' ');
      const flagList = flags.split(',');
      const port = Number(address.split('@')[0]?.split(':').pop());
      return {
        id,
        port,
        role: flagList.includes('master') ? 'master' : 'replica',
        masterId: master === '-' ? undefined : master,
        failing: flagList.includes('fail') || flagList.includes('fail?'),
        connected: link === 'connected',
        // Importing/migrating markers (`[slot->-id]`) are not owned slots.
        slots: slots
          .filter((slot) => !slot.startsWith('['))
          .map((slot) => {
            const [first, last = first] = slot.split('-').map(Number) as [number, number?];
            return [first, last] as const;
          }),
      };
    });
}

/** Parses `CLUSTER INFO` into its `field:value` pairs. */
export function parseClusterInfo(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return fields;
}

/** Runs `ask` on a short-lived plain connection to one node (no retries: a dead node fails fast). */
export async function askNode<T>(port: number, ask: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    connectTimeout: 1_000,
    commandTimeout: 2_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return await ask(client);
  } finally {
    client.disconnect();
  }
}

/** What one node says about the cluster: `CLUSTER INFO` fields and `CLUSTER NODES`. */
export async function nodeView(port: number): Promise<{ info: Record<string, string>; nodes: ClusterNodeView[] }> {
  return await askNode(port, async (client) => ({
    info: parseClusterInfo(String(await client.call('CLUSTER', 'INFO'))),
    nodes: parseClusterNodes(String(await client.call('CLUSTER', 'NODES'))),
  }));
}

/** Is the cluster, as this node sees it, whole: state ok, every slot assigned, masters and attached replicas? */
export async function nodeSeesHealthyCluster(port: number, masters: number, replicas: number): Promise<boolean> {
  const { info, nodes } = await nodeView(port);
  if (info.cluster_state !== 'ok' || info.cluster_slots_assigned !== '16384') return false;
  const live = nodes.filter((node) => !node.failing && node.connected);
  const liveMasters = live.filter((node) => node.role === 'master' && node.slots.length > 0);
  const liveReplicas = live.filter((node) => node.role === 'replica' && node.masterId !== undefined);
  if (liveMasters.length !== masters || liveReplicas.length !== replicas) return false;
  const me = nodes.find((node) => node.connected && node.port === port);
  if (me?.role !== 'replica') return true;
  // A replica is attached once its replication link is up (the initial sync is done).
  const replication = await askNode(port, async (client) => parseClusterInfo(await client.info('replication')));
  return replication.master_link_status === 'up';
}
