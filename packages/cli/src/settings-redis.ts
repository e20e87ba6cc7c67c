import { z } from 'zod';
import type { Setting } from './setting-schemas.js';

/** `host:port,host:port,...`, each checked; the error names the bad entry. */
const nodes = z.string().transform((value, context) => {
  const result: { host: string; port: number }[] = [];
  for (const item of value.split(',').map((part) => part.trim())) {
    if (item === '') continue;
    const match = /^(.+):([0-9]{1,5})$/.exec(item);
    const port = Number(match?.[2]);
    if (match === null || port < 1 || port > 65535) {
      context.addIssue({ code: 'custom', message: `"${item}" is not host:port` });
      return z.NEVER;
    }
    result.push({ host: (match[1] as string).replace(/^\[(.*)\]$/, '$1'), port });
  }
  return result;
});

/** How every process reaches Redis besides REDIS_URL: Sentinel, Cluster, credentials, TLS, requirements. */
export const REDIS_SETTINGS = [
  {
    env: 'TASKGATE_REDIS_SENTINELS',
    flag: '--redis-sentinels',
    scope: 'both',
    schema: nodes,
    description:
      'Sentinels as `host:port,host:port,...`: connections ask them for the master of TASKGATE_REDIS_SENTINEL_NAME (REDIS_URL then only gives the scheme) and follow a failover.',
  },
  {
    env: 'TASKGATE_REDIS_SENTINEL_NAME',
    flag: '--redis-sentinel-name',
    scope: 'both',
    schema: z.string().min(1),
    description: 'Name of the Sentinel-monitored master; required with TASKGATE_REDIS_SENTINELS.',
  },
  {
    env: 'TASKGATE_REDIS_CLUSTER_NODES',
    flag: '--redis-cluster-nodes',
    scope: 'both',
    schema: nodes,
    description:
      'Redis Cluster seed nodes as `host:port,host:port,...` (ioredis Cluster, reads from masters; per-task and per-session channels use sharded pub/sub). REDIS_URL then only gives the scheme.',
  },
  {
    env: 'TASKGATE_REDIS_USERNAME',
    flag: '--redis-username',
    scope: 'both',
    schema: z.string().min(1),
    description: 'Redis ACL user of every connection (and of the sentinels).',
  },
  {
    env: 'TASKGATE_REDIS_PASSWORD',
    flag: '--redis-password',
    scope: 'both',
    schema: z.string().min(1),
    description: 'Redis password of every connection (and of the sentinels); never logged.',
  },
  {
    env: 'TASKGATE_REDIS_TLS_CA_FILE',
    flag: '--redis-tls-ca-file',
    scope: 'both',
    schema: z.string().min(1),
    description:
      'PEM file of the CA that signs the Redis certificates, read at start-up; turns TLS on (as does a `rediss://` REDIS_URL).',
  },
  {
    env: 'TASKGATE_REDIS_STRICT',
    flag: '--redis-strict',
    scope: 'both',
    schema: z.enum(['true', 'false']).transform((value) => value === 'true'),
    default: 'false',
    description:
      'Refuse to start when Redis may evict keys (maxmemory-policy other than noeviction); a Redis older than 7.0 is always refused.',
  },
  {
    env: 'TASKGATE_REDIS_WAIT_REPLICAS',
    flag: '--redis-wait-replicas',
    scope: 'both',
    schema: z.coerce.number().int().min(0).max(16),
    default: '0',
    description:
      'Replicas that must have a new task (its record and its job) before a gateway acknowledges it (`WAIT` on the masters of both), and a cancel before it is answered: a failover then loses no acknowledged task and undoes no acknowledged cancel. A create they do not confirm in time is refused with 503 and `Retry-After` and leaves nothing behind; such a cancel gets 503 too. A worker lets a job go only once they have the finish of its task: a failover that loses a finish runs the task again rather than leaving it `working`. 0: asynchronous replication only.',
  },
  {
    env: 'TASKGATE_REDIS_WAIT_TIMEOUT_MS',
    flag: '--redis-wait-timeout-ms',
    scope: 'both',
    schema: z.coerce.number().int().min(1).max(60_000),
    default: '1000',
    description:
      'How long a `WAIT` for TASKGATE_REDIS_WAIT_REPLICAS may take; fewer replicas by then refuses the request (503: a create is not made; a cancel may or may not stand). A refusal comes within about twice this.',
  },
  {
    env: 'TASKGATE_REDIS_COMMAND_TIMEOUT_MS',
    flag: '--redis-command-timeout-ms',
    scope: 'both',
    schema: z.coerce.number().int().min(100).max(600_000),
    default: '5000',
    description:
      'How long a gateway (or bridge) command may wait for Redis, reconnection included: a Redis down or frozen fails the request with HTTP 503 + `Retry-After` by then instead of hanging. Must exceed TASKGATE_REDIS_WAIT_TIMEOUT_MS. Workers wait for Redis instead.',
  },
] as const satisfies readonly Setting[];
