import type { Redis } from 'ioredis';

/**
 * Closes a connection without ever hanging: QUIT when it is connected (waiting at most `timeoutMs`), else, or
 * then, a hard disconnect. A QUIT sent while Redis is unreachable would wait in the offline queue forever,
 * and a shutdown must finish whatever state Redis is in.
 */
export async function closeRedis(redis: Redis, timeoutMs = 1000): Promise<void> {
  if (redis.status === 'ready') {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([redis.quit().catch(() => {}), timeout]).finally(() => clearTimeout(timer));
  }
  if (redis.status !== 'end') redis.disconnect();
}
