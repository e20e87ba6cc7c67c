import { createServer, type Socket, connect as tcpConnect } from 'node:net';

/** A TCP relay on 127.0.0.1 in front of a local port (Redis), for tests of what a network does to a client. */
export interface TcpRelay {
  readonly port: number;
  /** Starts accepting connections (a relay made `closed` refuses them until then). */
  open(): Promise<void>;
  /** Swallows the next chunk the target sends and cuts that connection: a reply lost with its connection. */
  cutNextReply(): void;
  close(): Promise<void>;
}

/**
 * Relays every connection to `target`. Like most proxies it accepts a connection and drops it when it cannot
 * reach the target. `closed`: the port is reserved but refuses connections until `open`.
 */
export async function startTcpRelay(target: number, options: { closed?: boolean } = {}): Promise<TcpRelay> {
  let cut = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = tcpConnect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (!cut) return void client.write(chunk);
      cut = false;
      client.destroy();
      upstream.destroy();
    });
    for (const socket of [client, upstream]) {
      socket.on('error', () => {});
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the relay has no port');
  if (options.closed === true) await new Promise<void>((resolve) => server.close(() => resolve()));
  return {
    port: address.port,
    open: () => listen(address.port),
    cutNextReply: () => {
      cut = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
