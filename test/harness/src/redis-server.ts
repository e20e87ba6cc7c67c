import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RedisServer, type StartRedisOptions, startRedisServer } from '@taskgate/dev-redis';

export { assertRedisServerAvailable, freePort, type RedisServer, type StartRedisOptions } from '@taskgate/dev-redis';

/** Starts a private, persistence-free `redis-server` on a free loopback port (a temporary directory, removed on stop). */
export function startRedis(options: Omit<StartRedisOptions, 'dir' | 'appendOnly'> = {}): Promise<RedisServer> {
  return startRedisServer(options);
}

/**
 * Starts a private `redis-server` whose data lives in `dir` as an append-only file with `appendfsync always`
 * (the directory is kept on stop). `stop` kills it with SIGKILL; started again with the same `dir` and `port`,
 * it comes back with every write it acknowledged.
 */
export function startDurableRedis(
  dir: string,
  options: Omit<StartRedisOptions, 'dir' | 'appendOnly'> = {},
): Promise<RedisServer> {
  return startRedisServer({ ...options, dir, appendOnly: true });
}

/** A redis-server with AOF (`appendfsync always`) in a data directory of its own, that can die and come back. */
export interface PersistentRedis extends AsyncDisposable {
  readonly port: number;
  readonly url: string;
  /** The pid of the server running now (changes with every restart). */
  readonly pid: number;
  /** SIGKILL by pid: the server is gone (connections refused) until `restart`. */
  kill(): Promise<void>;
  /** Starts the server again on the same port from the same data directory (after `kill`). */
  restart(): Promise<void>;
  /** SIGSTOP: the server hangs (connections stay open, nothing answers) until `resume`. */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
  /** Stops the server by its pid and removes the data directory. */
  stop(): Promise<void>;
}

/**
 * Starts a redis-server whose every write reaches its AOF before the reply (`appendonly yes`, `appendfsync
 * always`), so a kill loses nothing acknowledged; `restart` brings it back on the same port and data.
 */
export async function startPersistentRedis(): Promise<PersistentRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'taskgate-aof-'));
  let server = await startDurableRedis(dir);
  const port = server.port;
  let paused = false;
  const kill = async (): Promise<void> => {
    if (paused) process.kill(server.pid, 'SIGCONT');
    paused = false;
    await server.stop();
  };
  const stop = async (): Promise<void> => {
    await kill();
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    port,
    url: server.url,
    get pid() {
      return server.pid;
    },
    kill,
    async restart() {
      server = await startDurableRedis(dir, { port });
    },
    pause() {
      process.kill(server.pid, 'SIGSTOP');
      paused = true;
    },
    resume() {
      if (paused) process.kill(server.pid, 'SIGCONT');
      paused = false;
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
