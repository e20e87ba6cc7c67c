import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { counterIn, gaugeIn } from '../telemetry/metrics-registry.js';

const watched = new WeakMap<Registry, Map<Redis, string>>();

/**
 * Counts a connection's errors and reconnects, and reports on every scrape whether it is ready
 * (`taskgate_redis_connected`, 1 or 0; the least ready connection of a role wins). `role` names the
 * connection's job (`commands`, `subscriber`); returns a function that stops watching it.
 */
export function watchRedis(registry: Registry, redis: Redis, role: string): () => void {
  let connections = watched.get(registry);
  if (connections === undefined) {
    const all = new Map<Redis, string>();
    connections = all;
    watched.set(registry, all);
    gaugeIn(registry, {
      name: 'taskgate_redis_connected',
      help: 'Whether the Redis connections of a role are ready (1) or not (0), at scrape time.',
      labelNames: ['connection'],
      collect() {
        this.reset();
        const byRole = new Map<string, number>();
        for (const [connection, name] of all) {
          const ready = connection.status === 'ready' ? 1 : 0;
          byRole.set(name, Math.min(byRole.get(name) ?? 1, ready));
        }
        for (const [name, value] of byRole) this.set({ connection: name }, value);
      },
    });
  }
  const errors = counterIn(registry, {
    name: 'taskgate_redis_errors_total',
    help: 'Errors reported by Redis connections (connection refused, reset, timeouts), by connection role.',
    labelNames: ['connection'],
  });
  const reconnects = counterIn(registry, {
    name: 'taskgate_redis_reconnects_total',
    help: 'Reconnection attempts of Redis connections, by connection role.',
    labelNames: ['connection'],
  });
  errors.inc({ connection: role }, 0);
  reconnects.inc({ connection: role }, 0);
  const onError = (): void => errors.inc({ connection: role });
  const onReconnecting = (): void => reconnects.inc({ connection: role });
  redis.on('error', onError);
  redis.on('reconnecting', onReconnecting);
  connections.set(redis, role);
  const mine = connections;
  return () => {
    redis.off('error', onError);
    redis.off('reconnecting', onReconnecting);
    mine.delete(redis);
  };
}
