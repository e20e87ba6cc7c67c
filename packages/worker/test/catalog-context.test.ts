import { Keys, TaskOutbox, ToolCatalog } from '@taskgate/core';
import { startRedis, useRedis } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createWorker, defineTool, toCatalogEntry } from '../src/index.js';
import { recordTaskChannels } from './support/channel-recorder.js';
import { until } from './support/gateway.js';
import { useWorkers } from './support/in-process.js';
import { simple } from './support/simple-tool.js';

describe('catalog and context', () => {
  const redis = useRedis();
  const env = useWorkers(redis);

  it('[TOOL-1] registers its tools in the catalog and keeps them live with heartbeats', async () => {
    const a = defineTool({ ...simple, name: 'alpha', taskSupport: 'required', handler: () => 'ran alpha' });
    const b = defineTool({ ...simple, name: 'beta', queue: 'shared', concurrency: 3, handler: () => 'ran beta' });
    const c = defineTool({ ...simple, name: 'gamma', queue: 'shared', handler: () => 'ran gamma' });
    await env.worker([a, b, c], { heartbeatMs: 100 });
    const gateway = env.gateway();
    const entries = await gateway.catalog.list();
    expect(entries).toEqual([toCatalogEntry(a), toCatalogEntry(b), toCatalogEntry(c)]);
    expect(entries.map((entry) => entry.queue)).toEqual(['tool.alpha', 'shared', 'shared']);
    const first = Number(await gateway.redis.zscore(gateway.keys.toolsLive(), 'gamma'));
    await until(
      async () => (Number(await gateway.redis.zscore(gateway.keys.toolsLive(), 'gamma')) > first ? true : undefined),
      2000,
      'a heartbeat',
    );
    // Tools sharing a queue are dispatched by name.
    const [x, y] = [await gateway.call('beta', {}), await gateway.call('gamma', {})];
    expect(await gateway.outcome((await gateway.waitForEnd(x)).taskId)).toEqual({
      result: { content: [{ type: 'text', text: 'ran beta' }] },
    });
    expect(await gateway.outcome((await gateway.waitForEnd(y)).taskId)).toEqual({
      result: { content: [{ type: 'text', text: 'ran gamma' }] },
    });
  });

  it('publishes its catalog entries again after Redis restarted empty', async () => {
    const tool = defineTool({ ...simple, name: 'phoenix', handler: () => 'back' });
    const server = await startRedis();
    const keys = new Keys(redis.prefix);
    const worker = createWorker({ redis: server.url, prefix: redis.prefix, tools: [tool] });
    const client = new Redis(server.url, { maxRetriesPerRequest: null });
    client.on('error', () => {});
    const admin = new Redis(server.url);
    try {
      await worker.ready;
      const catalog = new ToolCatalog({ redis: client, keys });
      expect(await catalog.get('phoenix')).toEqual(toCatalogEntry(tool));
      // What a restart without persistence looks like to clients: no data, no scripts, every connection dropped.
      // (Stopping the server and starting one on its port again races other tests for the freed port.)
      await admin.flushall();
      await admin.script('FLUSH');
      await admin.client('KILL', 'TYPE', 'NORMAL');
      await admin.client('KILL', 'TYPE', 'PUBSUB');
      expect(await until(() => catalog.get('phoenix'), 10_000, 'the entry')).toEqual(toCatalogEntry(tool));
    } finally {
      await worker.close({ deadlineMs: 100 });
      client.disconnect();
      admin.disconnect();
      await server.stop();
    }
  });

  it('[ERR-5] fails a job for a tool its queue’s worker does not have with -32601', async () => {
    const known = defineTool({ ...simple, name: 'known', queue: 'mixed', handler: () => 'known' });
    await env.worker([known]);
    const gateway = env.gateway();
    const ghost = { ...toCatalogEntry(known), tool: { ...toCatalogEntry(known).tool, name: 'ghost' } };
    const taskId = await gateway.callWith(ghost, {});
    expect(await gateway.waitForEnd(taskId)).toMatchObject({ status: 'failed' });
    expect(await gateway.outcome(taskId)).toEqual({
      error: { code: -32601, message: "Unknown tool 'ghost': no worker of queue 'mixed' has it" },
    });
  });

  it('gives the handler the principal and the client’s capabilities and info from the job', async () => {
    const whoami = defineTool({
      ...simple,
      name: 'whoami',
      handler: (_args, ctx) => ({
        principal: ctx.principal ?? null,
        client: ctx.client.info?.name ?? null,
        elicitation: ctx.client.capabilities.elicitation !== undefined,
        sampling: ctx.client.capabilities.sampling !== undefined,
      }),
    });
    await env.worker([whoami]);
    const gateway = env.gateway();
    const taskId = await gateway.call(
      'whoami',
      {},
      {
        principal: 'user-7',
        client: { capabilities: { elicitation: {} }, info: { name: 'inspector', version: '1.0' } },
      },
    );
    await gateway.waitForEnd(taskId);
    expect(await gateway.outcome(taskId)).toEqual({
      result: {
        content: [
          { type: 'text', text: '{"principal":"user-7","client":"inspector","elicitation":true,"sampling":false}' },
        ],
      },
    });
  });

  it('refuses to elicit or sample from a client that did not declare the capability', async () => {
    const errors: string[] = [];
    const pushy = defineTool({
      ...simple,
      name: 'pushy',
      async handler(_args, ctx) {
        for (const ask of [
          () => ctx.elicit({ mode: 'url', message: 'Log in', elicitationId: 'e1', url: 'https://example.com/login' }),
          () => ctx.sample({ messages: [], maxTokens: 5 }),
          () => ctx.elicit({ message: 'Name?', requestedSchema: { type: 'object', properties: {} } }),
        ]) {
          await ask().catch((error: Error) => errors.push(`${error.name}: ${error.message}`));
        }
        return 'asked';
      },
    });
    await env.worker([pushy], { inputTimeoutMs: 300 });
    const gateway = env.gateway();
    const channels = await recordTaskChannels(redis, gateway.keys);
    const taskId = await gateway.call('pushy', {}, { client: { capabilities: { elicitation: { form: {} } } } });
    expect((await gateway.waitForEnd(taskId)).status).toBe('completed');
    expect(errors).toEqual([
      'ClientCapabilityError: The client did not declare URL-mode elicitation (capabilities.elicitation.url)',
      'ClientCapabilityError: The client did not declare the sampling capability; check ctx.client.capabilities.sampling first',
      'InputWaitError: No answer arrived in time',
    ]);
    // Only the allowed form elicitation went out (and timed out); the refused ones never touched the task.
    // The channel's last message may reach the recorder after the record was read as completed.
    await until(
      async () => (channels.statuses(taskId).at(-1) === 'completed' ? true : undefined),
      10_000,
      'completed on the channel',
    );
    expect(channels.statuses(taskId)).toEqual(['input_required', 'working', 'completed']);
    const requests = await new TaskOutbox({ redis: gateway.redis, keys: gateway.keys }).read(taskId);
    expect(requests.map((entry) => entry.message.type === 'request' && entry.message.method)).toEqual([
      'elicitation/create',
    ]);
  });
});
