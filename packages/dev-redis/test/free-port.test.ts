import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../src/index.js';

async function listen(port: number): Promise<() => Promise<void>> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return async () => await new Promise<void>((resolve) => server.close(() => resolve()));
}

describe('freePort', () => {
  it('returns a loopback port nothing listens on', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(1023);
    await (await listen(port))();
  });

  it('chooses below the kernel ephemeral range, so no outgoing connection takes the port between two runs', async () => {
    const low = Number.parseInt(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8'), 10);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) expect(port).toBeLessThan(low);
    // Random within the band: 20 draws are not all the same port.
    expect(new Set(ports).size).toBeGreaterThan(1);
  });
});
