import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

// A port the kernel hands out with `listen(0)` lies in its ephemeral range, the range outgoing connections
// take their local ports from: once the process that listened on it stops, any client socket on the machine
// may take it, and a process restarted on the same port fails with EADDRINUSE. Ports are therefore chosen
// at random from the band just below that range, which the kernel never hands out by itself.
const BAND = 8000;
const TRIES = 50;

function ephemeralLow(): number {
  try {
    const low = Number.parseInt(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8'), 10);
    return Number.isInteger(low) && low > 1024 ? low : 32768;
  } catch {
    return 32768;
  }
}

const band = ((): { readonly from: number; readonly size: number } => {
  const low = ephemeralLow();
  const from = Math.max(1024, low - BAND);
  return { from, size: low - from };
})();

/** Listens on `port` (0: the kernel chooses) and closes again; resolves with the port, or undefined if taken. */
async function tryPort(port: number): Promise<number | undefined> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(undefined) : reject(error),
    );
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A free loopback port below the kernel's ephemeral range, so it stays free for a restart on the same
 * port; the kernel's own choice when that band is full.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < TRIES && band.size > 0; i++) {
    const port = await tryPort(band.from + Math.floor(Math.random() * band.size));
    if (port !== undefined) return port;
  }
  const port = await tryPort(0);
  if (port === undefined) throw new Error('no free loopback port');
  return port;
}
