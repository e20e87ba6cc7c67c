import { postHeaders, raw, rawCall, rawInitialize, useRedis, waitFor } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { useStacks } from './support/stack.js';

/** Calls of one command on the whole server so far (INFO commandstats). */
function calls(info: string, command: string): number {
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
}

/** Waits until `gateways` connections have tracking on (flag `t`): each gateway's session cache is set up. */
async function tracking(admin: Redis, gateways: number): Promise<void> {
  const on = async (): Promise<number> =>
    String(await admin.client('LIST'))
      .split('\n')
      .filter((line) => /\bflags=\S*t/.test(line)).length;
  await waitFor(async () => (await on()) >= gateways, `${gateways} session cache(s) set up`, 10_000);
}

describe("a gateway's session cache", () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('answers the requests of a busy session without reading it from Redis', async () => {
    const { url } = await start({ tools: false });
    const admin = redis.connect();
    await tracking(admin, 1);
    const sessionId = await rawInitialize(url);
    // The first request refreshes the session's expiry, the second reads it into the cache.
    for (let i = 0; i < 2; i++) expect((await rawCall(url, sessionId, 'ping')).status).toBe(200);
    const before = await admin.info('commandstats');
    for (let i = 0; i < 20; i++) expect((await rawCall(url, sessionId, 'ping')).status).toBe(200);
    const after = await admin.info('commandstats');
    expect(calls(after, 'hgetall') - calls(before, 'hgetall')).toBe(0);
  });

  it('refuses a session on one gateway as soon as another ended it', async () => {
    const a = await start({ tools: false });
    const b = await start({ tools: false });
    for (let round = 0; round < 20; round++) {
      const sessionId = await rawInitialize(a.url);
      for (let i = 0; i < 3; i++) expect((await rawCall(b.url, sessionId, 'ping')).status).toBe(200);
      expect((await raw(a.url, { method: 'DELETE', headers: postHeaders(sessionId) })).status).toBe(200);
      const refused = await rawCall(b.url, sessionId, 'ping');
      expect(refused.status).toBe(404);
      expect(refused.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
    }
  });

  it('reads a session again once another gateway changed it, then holds it again', async () => {
    const a = await start({ tools: false });
    const b = await start({ tools: false });
    const admin = redis.connect();
    await tracking(admin, 2);
    const sessionId = await rawInitialize(a.url);
    for (const url of [a.url, b.url]) {
      for (let i = 0; i < 3; i++) expect((await rawCall(url, sessionId, 'ping')).status).toBe(200);
    }
    const hgetalls = async (): Promise<number> => calls(await admin.info('commandstats'), 'hgetall');
    expect((await rawCall(a.url, sessionId, 'logging/setLevel', { level: 'error' })).status).toBe(200);
    const held = await hgetalls();
    // Redis told b of the change: its next request reads the session (one HGETALL), the ones after do not.
    for (let i = 0; i < 5; i++) expect((await rawCall(b.url, sessionId, 'ping')).status).toBe(200);
    expect(await hgetalls()).toBe(held + 1);
  });
});
