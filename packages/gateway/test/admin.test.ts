import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Keys, queueOfTask, shardQueues, ToolCatalog, ToolQueues } from '@taskgate/core';
import { connectClient, useRedis, waitFor } from '@taskgate/test-harness';
import { TEST_TOOLS } from '@taskgate/test-harness/tools';
import { defineTool } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useStacks } from './support/stack.js';

const ADMIN_TOKEN = 'admin-test-token-0123456789';
const TOKENS = { 'alice-token-0123456789': 'alice', 'bob-token-0123456789': 'bob' };

/** Asks the user once (elicitation), then answers with the name. */
const askName = defineTool({
  name: 'ask_name',
  description: 'Asks for a name',
  inputSchema: z.object({}),
  taskSupport: 'required',
  async handler(_args, ctx) {
    const answer = await ctx.elicit({
      message: 'Name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    });
    return `Hello, ${String(answer.content?.name)}`;
  },
});

describe('admin listener', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  async function stackWithAdmin() {
    const stack = await start({
      gateway: { auth: { mode: 'tokens', tokens: TOKENS }, adminToken: ADMIN_TOKEN },
      tools: [...TEST_TOOLS, askName],
    });
    const admin = await stack.gateway.listenAdmin(0, '127.0.0.1');
    const base = `http://127.0.0.1:${admin.port}`;
    const call = (path: string, init: RequestInit = {}, token: string | null = ADMIN_TOKEN) =>
      fetch(`${base}${path}`, {
        ...init,
        headers: { ...(token !== null && { Authorization: `Bearer ${token}` }), ...(init.headers ?? {}) },
      });
    return { stack, admin, base, call };
  }

  async function createTask(url: string, token: string, name: string, args: Record<string, unknown>) {
    const { client } = await connectClient(url, { token });
    const created = await client.request(
      { method: 'tools/call', params: { name, arguments: args, task: {} } },
      CreateTaskResultSchema,
    );
    return { client, taskId: created.task.taskId };
  }

  it('answers 401 without the admin token or with a wrong one, and is not on the MCP port', async () => {
    const { stack, call, admin } = await stackWithAdmin();
    for (const token of [null, 'wrong-token-0123456789', 'alice-token-0123456789']) {
      const res = await call('/admin/api/tasks', {}, token);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="taskgate-admin"');
      expect(await res.json()).toEqual({ error: expect.stringContaining('Authorization: Bearer') });
    }
    expect((await call('/admin/api/events', {}, null)).status).toBe(401);
    expect((await call('/admin/queues/', {}, null)).status).toBe(401);
    const mcpPort = new URL(stack.url).port;
    expect(String(admin.port)).not.toBe(mcpPort);
    const onMcp = await fetch(`http://127.0.0.1:${mcpPort}/admin/api/tasks`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(onMcp.status).toBe(404);
  });

  it('lists the tasks of two principals with owners as digests, filters by status and tool, pages', async () => {
    const { stack, call } = await stackWithAdmin();
    const a = await createTask(stack.url, 'alice-token-0123456789', 'report', { pages: 1 });
    const b = await createTask(stack.url, 'bob-token-0123456789', 'sleep', { ms: 5000 });
    await waitFor(async () => (await a.client.experimental.tasks.getTask(a.taskId)).status === 'completed', 'done');
    const res = await call('/admin/api/tasks');
    expect(res.status).toBe(200);
    const page = (await res.json()) as { tasks: { taskId: string; owner: string; status: string; tool: string }[] };
    const byId = new Map(page.tasks.map((task) => [task.taskId, task]));
    expect(byId.get(a.taskId)).toMatchObject({ owner: Keys.ownerId('alice'), status: 'completed', tool: 'report' });
    expect(byId.get(b.taskId)).toMatchObject({ owner: Keys.ownerId('bob'), status: 'working', tool: 'sleep' });
    expect(JSON.stringify(page)).not.toContain('alice');

    const working = (await (await call('/admin/api/tasks?status=working')).json()) as { tasks: { taskId: string }[] };
    expect(working.tasks.map((task) => task.taskId)).toEqual([b.taskId]);
    const reports = (await (await call('/admin/api/tasks?tool=report')).json()) as { tasks: { taskId: string }[] };
    expect(reports.tasks.map((task) => task.taskId)).toEqual([a.taskId]);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const query = `/admin/api/tasks?limit=1${cursor === undefined ? '' : `&cursor=${cursor}`}`;
      const next = (await (await call(query)).json()) as { tasks: { taskId: string }[]; nextCursor?: string };
      seen.push(...next.tasks.map((task) => task.taskId));
      cursor = next.nextCursor;
    } while (cursor !== undefined);
    expect(seen.sort()).toEqual([a.taskId, b.taskId].sort());

    const bad = await call('/admin/api/tasks?status=done');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: expect.stringContaining("status: 'done' is not one of working") });
  });

  it("shows a task's timeline after a real flow through MCP: created, started, progress, finished, pods", async () => {
    const { stack, call } = await stackWithAdmin();
    const a = await createTask(stack.url, 'alice-token-0123456789', 'report', { pages: 2 });
    await waitFor(async () => (await a.client.experimental.tasks.getTask(a.taskId)).status === 'completed', 'done');
    await waitFor(async () => {
      const detail = (await (await call(`/admin/api/tasks/${a.taskId}`)).json()) as { timeline: { event: string }[] };
      return detail.timeline.some((entry) => entry.event === 'finished');
    }, 'the finished entry');
    const detail = (await (await call(`/admin/api/tasks/${a.taskId}`)).json()) as {
      task: { status: string; owner: string };
      outcome: unknown;
      timeline: { event: string; detail?: string; pod?: string }[];
      pods: string[];
    };
    expect(detail.task).toMatchObject({ status: 'completed', owner: Keys.ownerId('alice') });
    expect(detail.outcome).toEqual({ isError: false });
    expect(detail.timeline.map((entry) => [entry.event, entry.detail])).toEqual([
      ['created', undefined],
      ['started', 'attempt 1'],
      ['progress', '1/2'],
      ['progress', '2/2'],
      ['finished', 'completed'],
    ]);
    expect(detail.pods.length).toBe(1);
    expect(detail.timeline[0]?.pod).toBe(detail.pods[0]);

    const missing = await call('/admin/api/tasks/AAAAnotatask0000000000000000');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: expect.stringContaining('not found') });
  });

  it("shows a task's input requests in its timeline", async () => {
    const { stack, call } = await stackWithAdmin();
    const { client } = await connectClient(stack.url, {
      token: 'alice-token-0123456789',
      capabilities: { elicitation: { form: {} } },
    });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }));
    let taskId = '';
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'ask_name', arguments: {} },
      CallToolResultSchema,
      { task: {} },
    )) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'error') throw message.error;
    }
    await waitFor(async () => {
      const detail = (await (await call(`/admin/api/tasks/${taskId}`)).json()) as { timeline: { event: string }[] };
      return detail.timeline.some((entry) => entry.event === 'finished');
    }, 'the finished entry');
    const detail = (await (await call(`/admin/api/tasks/${taskId}`)).json()) as {
      timeline: { event: string; detail?: string }[];
    };
    expect(detail.timeline.map((entry) => [entry.event, entry.detail])).toEqual([
      ['created', undefined],
      ['started', 'attempt 1'],
      ['input_request', 'elicitation/create'],
      ['finished', 'completed'],
    ]);
    expect(JSON.stringify(detail)).not.toContain('Name?');
  });

  it('cancels a running task like tasks/cancel and refuses a terminal one with 409', async () => {
    const { stack, call } = await stackWithAdmin();
    const b = await createTask(stack.url, 'bob-token-0123456789', 'sleep', { ms: 20_000 });
    const res = await call(`/admin/api/tasks/${b.taskId}/cancel`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ task: { taskId: b.taskId, status: 'cancelled' } });
    const seen = await b.client.experimental.tasks.getTask(b.taskId);
    expect(seen).toMatchObject({ status: 'cancelled', statusMessage: 'The task was cancelled by an operator.' });
    const again = await call(`/admin/api/tasks/${b.taskId}/cancel`, { method: 'POST' });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error: expect.stringContaining('is cancelled already') });
  });

  it('purges finished tasks by status, reporting progress lines, and keeps live ones', async () => {
    const { stack, call } = await stackWithAdmin();
    const done = await createTask(stack.url, 'alice-token-0123456789', 'report', { pages: 1 });
    const live = await createTask(stack.url, 'bob-token-0123456789', 'sleep', { ms: 20_000 });
    await waitFor(
      async () => (await done.client.experimental.tasks.getTask(done.taskId)).status === 'completed',
      'done',
    );
    const refused = await call('/admin/api/purge', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ status: ['working'] }),
    });
    expect(refused.status).toBe(400);
    const res = await call('/admin/api/purge', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ status: ['completed'] }),
    });
    expect(res.status).toBe(200);
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.at(-1)).toEqual({ scanned: 2, purged: 1, done: true });
    expect((await call(`/admin/api/tasks/${done.taskId}`)).status).toBe(404);
    expect((await call(`/admin/api/tasks/${live.taskId}`)).status).toBe(200);
    expect(await stack.redis.exists(stack.keys.task(done.taskId), stack.keys.taskTrail(done.taskId))).toBe(0);
  });

  it('sends task status changes over SSE, and lists queues and live workers', async () => {
    const { stack, call } = await stackWithAdmin();
    const controller = new AbortController();
    const events = await call('/admin/api/events', { signal: controller.signal });
    expect(events.status).toBe(200);
    expect(events.headers.get('content-type')).toContain('text/event-stream');
    const reader = (events.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    const b = await createTask(stack.url, 'bob-token-0123456789', 'sleep', { ms: 20_000 });
    await call(`/admin/api/tasks/${b.taskId}/cancel`, { method: 'POST' });
    while (!text.includes(`"taskId":"${b.taskId}","status":"cancelled"`)) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
    }
    controller.abort();
    expect(text).toContain('event: task');
    expect(text).toContain(`"taskId":"${b.taskId}","status":"cancelled"`);

    const queues = (await (await call('/admin/api/queues')).json()) as { queues: { queue: string; tools: string[] }[] };
    expect(queues.queues.find((queue) => queue.tools.includes('sleep'))).toMatchObject({
      queue: 'tool.sleep',
      waiting: 0,
      oldestWaitingMs: 0,
    });
    const workers = (await (await call('/admin/api/workers')).json()) as {
      workers: { tools: string[]; pod: string }[];
    };
    expect(workers.workers).toHaveLength(1);
    expect(workers.workers[0]?.tools).toContain('sleep');
  });

  it('lists each shard of a sharded tool queue; an admin cancel removes a waiting job from its shard', async () => {
    // concurrency 1: the second task of a shard waits behind the first.
    const slow = defineTool({
      name: 'slow',
      description: 'Waits',
      inputSchema: z.object({}),
      taskSupport: 'required',
      queueShards: 3,
      concurrency: 1,
      handler: (_args, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve('stopped'))),
    });
    const stack = await start({ gateway: { adminToken: ADMIN_TOKEN }, tools: [slow] });
    const admin = await stack.gateway.listenAdmin(0, '127.0.0.1');
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`http://127.0.0.1:${admin.port}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      });
    const { client } = await connectClient(stack.url);
    const ids: string[] = [];
    // Tasks until one shard holds two: one runs, one waits there.
    while (new Set(ids.map((id) => queueOfTask('tool.slow', 3, id))).size === ids.length) {
      const created = await client.request(
        { method: 'tools/call', params: { name: 'slow', arguments: {}, task: {} } },
        CreateTaskResultSchema,
      );
      ids.push(created.task.taskId);
    }
    const waitingId = ids.at(-1) as string;
    const shard = queueOfTask('tool.slow', 3, waitingId);
    type Listed = { queues: { queue: string; shard?: { index: number; of: number }; waiting: number }[] };
    const listed = async (): Promise<Listed> => (await (await call('/admin/api/queues')).json()) as Listed;
    await waitFor(async () => (await listed()).queues.find((q) => q.queue === shard)?.waiting === 1, 'one waits');
    const { queues } = await listed();
    expect(queues.map((q) => q.queue)).toEqual([...shardQueues('tool.slow', 3)].sort());
    expect(queues.map((q) => q.shard)).toEqual(
      [...shardQueues('tool.slow', 3)]
        .sort()
        .map((name) => ({ index: shardQueues('tool.slow', 3).indexOf(name), of: 3 })),
    );
    const cancelled = await call(`/admin/api/tasks/${waitingId}/cancel`, { method: 'POST' });
    expect(cancelled.status).toBe(200);
    await waitFor(async () => (await listed()).queues.find((q) => q.queue === shard)?.waiting === 0, 'job removed');
    for (const id of ids.slice(0, -1)) await call(`/admin/api/tasks/${id}/cancel`, { method: 'POST' });
  });

  it('tasks/cancel after a change of the shard count removes a waiting job from its old shard', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Waits',
      inputSchema: z.object({}),
      taskSupport: 'required',
      queueShards: 3,
      concurrency: 1,
      handler: (_args, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve('stopped'))),
    });
    const stack = await start({ gateway: { toolCacheMs: 0 }, tools: [slow] });
    const { client } = await connectClient(stack.url);
    const ids: string[] = [];
    const old = (id: string) => queueOfTask('tool.slow', 3, id);
    // Tasks until one waits behind another on its shard, and its shard under 5 is another queue.
    while (ids.length < 2 || ids.slice(0, -1).every((id) => old(id) !== old(ids.at(-1) as string))) {
      const created = await client.request(
        { method: 'tools/call', params: { name: 'slow', arguments: {}, task: {} } },
        CreateTaskResultSchema,
      );
      ids.push(created.task.taskId);
      if (queueOfTask('tool.slow', 5, ids.at(-1) as string) === old(ids.at(-1) as string)) ids.pop();
    }
    const waitingId = ids.at(-1) as string;
    const queues = new ToolQueues({ connection: stack.redis, keys: stack.keys });
    const shard = queues.queue(old(waitingId));
    await waitFor(async () => (await shard.getJob(waitingId))?.id === waitingId, 'the job waits');
    // A rollout of workers with 5 shards: the catalog now says 5 and records both counts.
    const catalog = new ToolCatalog({ redis: stack.redis, keys: stack.keys });
    const entry = await catalog.get('slow');
    await catalog.register([{ ...(entry as NonNullable<typeof entry>), queueShards: 5 }], { announce: false });
    await catalog.recordShardCount('tool.slow', 5);
    expect((await catalog.get('slow'))?.queueShards).toBe(5);
    const cancelled = await client.request(
      { method: 'tasks/cancel', params: { taskId: waitingId } },
      z.object({ status: z.string() }).passthrough(),
    );
    expect(cancelled.status).toBe('cancelled');
    await waitFor(async () => (await shard.getJob(waitingId)) === undefined, 'the job left its old shard');
    for (const id of ids.slice(0, -1)) {
      await client.request({ method: 'tasks/cancel', params: { taskId: id } }, z.object({}).passthrough());
    }
    await queues.close();
  });

  it('opens the raw queues with a signed cookie that every gateway of the deployment accepts', async () => {
    const first = await stackWithAdmin();
    const second = await stackWithAdmin();
    const session = await first.call('/admin/api/session', { method: 'POST' });
    expect(session.status).toBe(204);
    const setCookie = session.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^taskgate_admin=\d{13}\.[\w-]{43}; Path=\/admin\/queues; HttpOnly; SameSite=Strict; /);
    expect(setCookie).not.toContain(ADMIN_TOKEN);
    const cookie = setCookie.split(';')[0] as string;
    const queues = (base: string, value?: string) =>
      fetch(`${base}/admin/queues/`, value === undefined ? {} : { headers: { Cookie: value } });
    expect((await queues(second.base, cookie)).status).toBe(200);
    const forged = `${cookie.slice(0, -2)}${cookie.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await queues(second.base, forged)).status).toBe(401);
    const later = cookie.replace(/=(\d{13})\./, (_, until: string) => `=${Number(until) + 1000}.`);
    expect((await queues(second.base, later)).status).toBe(401);
    expect((await queues(second.base)).status).toBe(401);
    expect((await first.call('/admin/api/session', { method: 'POST' }, null)).status).toBe(401);
  });

  it('refuses to listen without an admin token', async () => {
    const stack = await start();
    await expect(stack.gateway.listenAdmin(0)).rejects.toThrow('The admin listener needs an admin token');
  });
});
