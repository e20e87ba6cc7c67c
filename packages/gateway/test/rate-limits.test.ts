import { rawCall, rawInitialize, scrape, useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { rev2026Request, TASKS } from './support/rev2026-07-28.js';
import { useStacks } from './support/stack.js';

const TOKENS = { 'alice-token-0123456789': 'alice', 'bob-token-0123456789': 'bob' };
const ALICE = { Authorization: 'Bearer alice-token-0123456789' };
const BOB = { Authorization: 'Bearer bob-token-0123456789' };
const metricsOf = (url: string) => scrape(new URL('/metrics', url).href);

interface RpcError {
  error?: { code: number; message: string; data?: { retryAfterMs: number; operation: string; limit: number } };
}

describe('rate limits and task limits', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('[SEC-3] limits each principal per operation class across gateways sharing one Redis, with -32029 and a retry hint', async () => {
    const gateway = {
      auth: { mode: 'tokens', tokens: TOKENS },
      rateLimits: { read: { points: 3, durationSec: 60 }, create: { points: 1, durationSec: 60 } },
    } as const;
    const a = await start({ gateway });
    const b = await start({ gateway, tools: false });
    const session = await rawInitialize(a.url, ALICE);
    const created = await rawCall(
      a.url,
      session,
      'tools/call',
      { name: 'sleep', arguments: { ms: 0 }, task: {} },
      ALICE,
    );
    const { taskId } = (created.json() as { result: { task: { taskId: string } } }).result.task;

    // Three reads on two pods spend alice's one budget; the fourth is refused wherever it lands.
    expect((await rawCall(a.url, session, 'tasks/get', { taskId }, ALICE)).json()).toMatchObject({
      result: { taskId },
    });
    expect((await rawCall(b.url, session, 'tasks/get', { taskId }, ALICE)).json()).toMatchObject({
      result: { taskId },
    });
    expect((await rawCall(a.url, session, 'tasks/list', {}, ALICE)).json()).toMatchObject({
      result: { tasks: [{ taskId }] },
    });
    const refused = await rawCall(b.url, session, 'tasks/get', { taskId }, ALICE);
    expect(refused.status).toBe(200);
    const body = refused.json() as RpcError;
    expect(body.error?.code).toBe(-32029);
    expect(body.error?.message).toMatch(
      /^Rate limit exceeded: at most 3 read operations per 60 s for each principal\. Retry after \d+ s\.$/,
    );
    expect(body.error?.data).toMatchObject({ operation: 'read', limit: 3, windowSeconds: 60 });
    const retryAfterMs = body.error?.data?.retryAfterMs ?? 0;
    expect(retryAfterMs).toBeGreaterThan(50_000);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(refused.headers['retry-after']).toBe(String(Math.ceil(retryAfterMs / 1000)));

    // Other classes and other principals have their own budgets.
    const second = await rawCall(
      a.url,
      session,
      'tools/call',
      { name: 'sleep', arguments: { ms: 0 }, task: {} },
      ALICE,
    );
    expect((second.json() as RpcError).error).toMatchObject({ code: -32029, data: { operation: 'create' } });
    expect((await rawCall(a.url, session, 'ping', undefined, ALICE)).json()).toMatchObject({ result: {} });
    const bobSession = await rawInitialize(b.url, BOB);
    expect((await rawCall(b.url, bobSession, 'tasks/list', {}, BOB)).json()).toMatchObject({ result: { tasks: [] } });

    const [onA, onB] = [await metricsOf(a.url), await metricsOf(b.url)];
    expect(onA.value('taskgate_rate_limit_rejections_total', { operation: 'read' })).toBe(0);
    expect(onB.value('taskgate_rate_limit_rejections_total', { operation: 'read' })).toBe(1);
    expect(onA.value('taskgate_rate_limit_rejections_total', { operation: 'create' })).toBe(1);
    expect(onB.value('taskgate_rpc_errors_total', { method: 'tasks/get', code: '-32029' })).toBe(1);
    expect(onA.value('taskgate_rate_limit_points', { operation: 'read' })).toBe(3);
    expect(onA.value('taskgate_rate_limit_window_seconds', { operation: 'create' })).toBe(60);
    expect(onA.value('taskgate_rate_limit_points', { operation: 'cancel' })).toBe(0);
    // The counters live under the deployment's prefix, keyed by a digest of the principal only.
    const keys = await a.redis.keys(`${a.keys.prefix}:rl:*`);
    expect(keys.map((key) => key.split(':')[2]).sort()).toEqual(['create', 'read', 'read']);
    for (const key of keys) expect(key).not.toMatch(/alice|bob/);
  });

  it('[SEC-3] gives the methods of revision 2026-07-28 their classes: tasks/update cancel, subscriptions/listen read, server/discover none', async () => {
    const gateway = {
      auth: { mode: 'tokens', tokens: TOKENS },
      rateLimits: { read: { points: 1, durationSec: 60 }, cancel: { points: 1, durationSec: 60 } },
    } as const;
    const a = await start({ gateway, tools: false });
    const b = await start({ gateway, tools: false });
    const options = { token: 'alice-token-0123456789', capabilities: { extensions: { [TASKS]: {} } } };
    const taskId = 'no-such-task';
    const update = { taskId, inputResponses: {} };
    // The first update spends alice's cancel budget (and fails on its own: no such task); the next is refused.
    expect((await rev2026Request(a.url, 'tasks/update', update, options)).body.error?.code).not.toBe(-32029);
    const refused = await rev2026Request(b.url, 'tasks/update', update, options);
    expect(refused.body.error).toMatchObject({ code: -32029, data: { operation: 'cancel', limit: 1 } });
    // One read (tasks/get) spends the read budget: subscriptions/listen is then refused on either pod.
    expect((await rev2026Request(a.url, 'tasks/get', { taskId }, options)).body.error?.code).not.toBe(-32029);
    const listen = await rev2026Request(b.url, 'subscriptions/listen', { notifications: { tasks: {} } }, options);
    expect(listen.body.error).toMatchObject({ code: -32029, data: { operation: 'read' } });
    for (let i = 0; i < 3; i++) {
      expect((await rev2026Request(a.url, 'server/discover', {}, options)).body.result).toMatchObject({
        resultType: 'complete',
      });
    }
    const metrics = await metricsOf(b.url);
    expect(metrics.value('taskgate_rate_limit_rejections_total', { operation: 'cancel' })).toBe(1);
    expect(metrics.value('taskgate_rate_limit_rejections_total', { operation: 'read' })).toBe(1);
  });

  it('[TTL-3] shows the per-owner concurrency limit and max ttl in metrics, and counts refusals at the limit', async () => {
    const stack = await start({ gateway: { limits: { maxActivePerOwner: 1, maxTtlMs: 120_000 } } });
    const session = await rawInitialize(stack.url);
    const call = () => rawCall(stack.url, session, 'tools/call', { name: 'sleep', arguments: { ms: 5000 }, task: {} });
    expect((await call()).json()).toMatchObject({ result: { task: { status: 'working' } } });
    expect((await call()).json()).toMatchObject({ error: { code: -32010, data: { limit: 1 } } });
    const metrics = await metricsOf(stack.url);
    expect(metrics.value('taskgate_owner_active_tasks_limit')).toBe(1);
    expect(metrics.value('taskgate_task_ttl_max_seconds')).toBe(120);
    expect(metrics.value('taskgate_task_ttl_default_seconds')).toBe(120);
    expect(metrics.value('taskgate_task_limit_rejections_total')).toBe(1);
    expect(metrics.value('taskgate_rpc_errors_total', { method: 'tools/call', code: '-32010' })).toBe(1);
  });
});
