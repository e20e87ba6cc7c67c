import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';

const BATCHED = Symbol('taskgate.batchedWrites');

type BatchedSocket = Socket & { [BATCHED]?: true };

/**
 * Commands a connection sends in one turn of the event loop leave in one socket write: the connection's
 * socket is corked at the turn's first command and uncorked right after the turn's I/O callbacks (the
 * `setImmediate` phase), so the commands of every request and job handled in that turn go out as one
 * `writev` instead of one system call each (the largest item in the profiles of gateway and worker). The
 * wait is within the same turn, no timer: a lone command leaves as soon as the callback that sent it and its
 * neighbours return. Applied to every socket the connection opens (reconnects too); a Cluster's node
 * connections are batched each.
 */
export function batchWrites(redis: Redis): void {
  const connection = redis as unknown as {
    stream?: BatchedSocket;
    on(event: string, listener: (node?: Redis) => void): unknown;
    isCluster?: boolean;
    nodes?: (role: 'all') => Redis[];
  };
  if (connection.isCluster === true) {
    for (const node of connection.nodes?.('all') ?? []) batchWrites(node);
    connection.on('+node', (node) => {
      if (node !== undefined) batchWrites(node);
    });
    return;
  }
  const patch = (): void => {
    const stream = connection.stream;
    if (stream === undefined || stream[BATCHED] === true) return;
    stream[BATCHED] = true;
    const write = stream.write;
    let corked = false;
    const flush = (): void => {
      corked = false;
      stream.uncork();
    };
    stream.write = function batchedWrite(this: Socket, ...args: Parameters<Socket['write']>): boolean {
      if (!corked) {
        corked = true;
        stream.cork();
        setImmediate(flush);
      }
      return write.apply(this, args);
    } as Socket['write'];
  };
  connection.on('connect', patch);
  patch();
}
