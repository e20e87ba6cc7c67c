import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Haproxy, startHaproxy } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The harness's HAProxy launcher against two plain HTTP backends on loopback: round robin per request (no
// affinity, even on one kept-alive connection), health checks on the given path with the given Host header, a
// backend failing them is taken out and comes back once it passes.

interface Backend {
  readonly server: Server;
  readonly port: number;
  healthy: boolean;
  readonly checks: { readonly url: string; readonly host: string }[];
}

async function backend(name: string): Promise<Backend> {
  const state: { healthy: boolean; checks: { url: string; host: string }[] } = { healthy: true, checks: [] };
  const server = createServer((request, response) => {
    if (request.url === '/readyz') {
      state.checks.push({ url: request.url, host: request.headers.host ?? '' });
      response.writeHead(state.healthy ? 200 : 503).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, { server, port: (server.address() as AddressInfo).port });
}

let backends: [Backend, Backend];
let proxy: Haproxy;

beforeAll(async () => {
  backends = [await backend('a'), await backend('b')];
  proxy = await startHaproxy({
    backends: backends.map((one) => ({ port: one.port })),
    healthCheck: { path: '/readyz', host: 'localhost', intervalMs: 100, timeoutMs: 5000 },
  });
  // Both backends passed a real check: HAProxy calls a server UP before its first one.
  await proxy.waitForHealthy();
}, 30_000);

afterAll(async () => {
  await proxy?.stop();
  for (const one of backends ?? []) one.server.close();
});

async function answers(count: number): Promise<string[]> {
  const seen: string[] = [];
  for (let index = 0; index < count; index++) seen.push(await (await fetch(`${proxy.origin}/mcp`)).text());
  return seen;
}

describe('startHaproxy', () => {
  it('alternates between the backends, request by request', async () => {
    await proxy.waitForHealthy();
    const seen = await answers(6);
    // A check that failed meanwhile (a backend out for a moment) would explain a repeat: there was none.
    expect((await proxy.servers()).map((one) => one.check)).toEqual(['L7OK', 'L7OK']);
    expect(new Set(seen)).toEqual(new Set(['a', 'b']));
    for (let index = 1; index < seen.length; index++) expect(seen[index]).not.toBe(seen[index - 1]);
  });

  it('health-checks GET <path> with the Host header', async () => {
    for (const one of backends) {
      // HAProxy starts a server UP before its first check: wait for that check (every 100 ms).
      await expect.poll(() => one.checks.length, { timeout: 5000 }).toBeGreaterThan(0);
      expect(one.checks[0]).toEqual({ url: '/readyz', host: 'localhost' });
    }
  });

  it('takes a backend failing its health check out, and back once it passes', async () => {
    backends[1].healthy = false;
    await proxy.waitForStates(['UP', 'DOWN']);
    expect(await answers(4)).toEqual(['a', 'a', 'a', 'a']);
    backends[1].healthy = true;
    await proxy.waitForHealthy();
    expect(new Set(await answers(4))).toEqual(new Set(['a', 'b']));
  });

  it('configures SSE-friendly timeouts and no affinity', () => {
    expect(proxy.config).toMatch(/timeout server 1h/);
    expect(proxy.config).toMatch(/timeout tunnel 1h/);
    expect(proxy.config).toMatch(/balance roundrobin/);
    expect(proxy.config).not.toMatch(/stick|cookie|prefer-last-server/);
  });

  it('stops by pid', async () => {
    const extra = await startHaproxy({ backends: [{ port: backends[0].port }] });
    const pid = extra.pid;
    await extra.stop();
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
