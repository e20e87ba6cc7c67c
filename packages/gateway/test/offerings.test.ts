import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { OfferingCatalog, ToolQueues } from '@taskgate/core';
import { connectClient, rawCall, rawInitialize, sleepMs, useRedis, waitFor } from '@taskgate/test-harness';
import { createWorker, defineTool } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { TEST_PROMPTS, TEST_RESOURCES } from './support/offerings.js';
import { rejection } from './support/rejection.js';
import { useStacks } from './support/stack.js';

describe('resources, prompts and completions served by workers', () => {
  const redis = useRedis();
  const start = useStacks(redis);
  const withOfferings = (gateway = {}) =>
    start({ gateway, worker: { resources: TEST_RESOURCES, prompts: TEST_PROMPTS } });

  it('lists resources and templates from the catalog, a page at a time, with cursors no other list takes', async () => {
    const stack = await withOfferings({ toolsPageSize: 2 });
    const { client } = await connectClient(stack.url);
    const uris: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      expect(page.resources.length).toBeLessThanOrEqual(2);
      uris.push(...page.resources.map((resource) => resource.uri));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(uris).toEqual(['test://broken', 'test://forbidden', 'test://notes', 'test://parts', 'test://pixel']);
    const first = await client.listResources();
    expect(first.resources[0]).toEqual({ uri: 'test://broken', name: 'broken' });
    expect((await client.listResources({ cursor: first.nextCursor as string })).resources[0]).toEqual({
      uri: 'test://notes',
      name: 'notes',
      title: 'Notes',
      description: 'Plain text',
      mimeType: 'text/plain',
    });
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([
      { uriTemplate: 'test://items/{id}', name: 'item', mimeType: 'application/json' },
    ]);
    const foreign = await rejection(client.listPrompts({ cursor: first.nextCursor as string }));
    expect(foreign.code).toBe(-32602);
    expect(foreign.message).toMatch(/not a prompts\/list cursor this server issued/);
  });

  it('reads static resources on a worker: text, bytes as base64, and several parts', async () => {
    const stack = await withOfferings();
    const { client } = await connectClient(stack.url);
    expect(await client.readResource({ uri: 'test://notes' })).toEqual({
      contents: [{ uri: 'test://notes', mimeType: 'text/plain', text: 'first note' }],
    });
    expect(await client.readResource({ uri: 'test://pixel' })).toEqual({
      contents: [
        { uri: 'test://pixel', mimeType: 'image/png', blob: Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64') },
      ],
    });
    expect(await client.readResource({ uri: 'test://parts' })).toEqual({
      contents: [
        { uri: 'test://parts', text: 'part one' },
        { uri: 'test://parts#2', mimeType: 'text/markdown', text: '# two' },
      ],
    });
  });

  it('reads a URI a template describes, with its variables, and answers -32002 for a URI nobody serves', async () => {
    const stack = await withOfferings();
    const { client } = await connectClient(stack.url);
    expect(await client.readResource({ uri: 'test://items/a%20b' })).toEqual({
      contents: [
        { uri: 'test://items/a%20b', mimeType: 'application/json', text: '{"id":"a b","uri":"test://items/a%20b"}' },
      ],
    });
    const missing = await rejection(client.readResource({ uri: 'test://items/1/2' }));
    expect(missing).toEqual({
      code: -32002,
      message: expect.stringContaining('Resource not found: test://items/1/2'),
      data: { uri: 'test://items/1/2' },
    });
  });

  it('[ERR-3] turns a failing read into -32603 with its message, and keeps a thrown protocol error as is', async () => {
    const stack = await withOfferings();
    const { client } = await connectClient(stack.url);
    expect(await rejection(client.readResource({ uri: 'test://broken' }))).toMatchObject({
      code: -32603,
      message: 'MCP error -32603: the disk is on fire',
    });
    expect(await rejection(client.readResource({ uri: 'test://forbidden' }))).toEqual({
      code: -32602,
      message: 'MCP error -32602: You may not read this resource',
      data: { reason: 'policy' },
    });
  });

  it('lists prompts with arguments derived from their zod schema and renders them on a worker', async () => {
    const stack = await withOfferings();
    const { client } = await connectClient(stack.url);
    expect((await client.listPrompts()).prompts).toEqual([
      { name: 'conversation' },
      {
        name: 'greeting',
        title: 'Greeting',
        description: 'Greets someone',
        arguments: [
          { name: 'name', description: 'Whom to greet', required: true },
          { name: 'tone', description: 'How', required: false },
        ],
      },
    ]);
    expect(await client.getPrompt({ name: 'greeting', arguments: { name: 'Ada', tone: 'formal' } })).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'Good day, Ada.' } }],
    });
    expect(await client.getPrompt({ name: 'conversation' })).toEqual({
      description: 'Two turns',
      messages: [
        { role: 'user', content: { type: 'text', text: 'Hi' } },
        { role: 'assistant', content: { type: 'text', text: 'Hello' } },
      ],
    });
  });

  it('[ERR-3] answers -32602 naming the problem for an unknown prompt or arguments that do not fit', async () => {
    const stack = await withOfferings();
    const { client } = await connectClient(stack.url);
    expect(await rejection(client.getPrompt({ name: 'nope' }))).toMatchObject({
      code: -32602,
      message: "MCP error -32602: Unknown prompt: 'nope'. Call prompts/list to see the prompts.",
    });
    const missing = await rejection(client.getPrompt({ name: 'greeting', arguments: { tone: 'warm' } }));
    expect(missing.code).toBe(-32602);
    expect(missing.message).toMatch(/Invalid arguments for prompt 'greeting': name: /);
    const wrong = await rejection(client.getPrompt({ name: 'greeting', arguments: { name: 'A', tone: 'loud' } }));
    expect(wrong.message).toMatch(/tone: /);
  });

  it('completes prompt arguments and template variables, capped at 100 values with total and hasMore', async () => {
    const stack = await withOfferings();
    const { client } = await connectClient(stack.url);
    expect(
      await client.complete({ ref: { type: 'ref/prompt', name: 'greeting' }, argument: { name: 'name', value: 'a' } }),
    ).toEqual({ completion: { values: ['Ada', 'Alan'] } });
    // Arguments resolved so far reach the completer.
    expect(
      await client.complete({
        ref: { type: 'ref/prompt', name: 'greeting' },
        argument: { name: 'name', value: 'a' },
        context: { arguments: { tone: 'none' } },
      }),
    ).toEqual({ completion: { values: [] } });
    // No completer for this argument: answered at once, no values.
    expect(
      await client.complete({ ref: { type: 'ref/prompt', name: 'greeting' }, argument: { name: 'tone', value: '' } }),
    ).toEqual({ completion: { values: [] } });
    const all = await client.complete({
      ref: { type: 'ref/resource', uri: 'test://items/{id}' },
      argument: { name: 'id', value: '' },
    });
    expect(all.completion.values).toHaveLength(100);
    expect(all.completion).toMatchObject({ total: 150, hasMore: true });
    expect(
      (
        await client.complete({
          ref: { type: 'ref/resource', uri: 'test://items/{id}' },
          argument: { name: 'id', value: '14' },
        })
      ).completion.values,
    ).toEqual(['14', '140', '141', '142', '143', '144', '145', '146', '147', '148', '149']);
    const unknown = await rejection(
      client.complete({ ref: { type: 'ref/resource', uri: 'test://other/{id}' }, argument: { name: 'id', value: '' } }),
    );
    expect(unknown.message).toMatch(/Unknown resource template: 'test:\/\/other\/\{id\}'/);
  });

  it('delivers resources/updated for subscribed URIs on the GET stream, and stops after unsubscribe', async () => {
    const stack = await withOfferings();
    const { client } = await connectClient(stack.url);
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => {
      updated.push(params.uri);
    });
    expect(await client.subscribeResource({ uri: 'test://notes' })).toEqual({});
    expect(await client.subscribeResource({ uri: 'test://items/7' })).toEqual({});
    const worker = stack.worker!;
    // The SDK opens its GET stream in the background: announce until the stream carries the update.
    await waitFor(async () => {
      await worker.resourceUpdated('test://notes');
      await sleepMs(50);
      return updated.includes('test://notes');
    }, 'an update of a subscribed resource');
    // One stream carries updates in order: once this one arrives, no earlier announcement is still in flight.
    updated.length = 0;
    await worker.resourceUpdated('test://pixel'); // not subscribed
    await worker.resourceUpdated('test://items/7');
    await waitFor(() => updated.includes('test://items/7'), 'the update of the template resource');
    expect(updated).toEqual(['test://items/7']);
    expect(await client.unsubscribeResource({ uri: 'test://notes' })).toEqual({});
    // The GET stream learns of the unsubscribe through Redis a moment after the response: rounds of
    // (notes, items/7) until a round carries items/7 alone; then notes stays silent.
    const round = async (): Promise<string[]> => {
      updated.length = 0;
      await worker.resourceUpdated('test://notes');
      await worker.resourceUpdated('test://items/7');
      await waitFor(() => updated.includes('test://items/7'), 'the update of the template resource');
      return [...updated];
    };
    await waitFor(async () => (await round()).length === 1, 'the unsubscribe taking effect');
    expect(await round()).toEqual(['test://items/7']);
  });

  it('refuses to subscribe to a URI no worker serves (-32002)', async () => {
    const stack = await withOfferings();
    const sessionId = await rawInitialize(stack.url);
    const response = await rawCall(stack.url, sessionId, 'resources/subscribe', { uri: 'test://nowhere' });
    expect(response.json()).toMatchObject({ id: 1, error: { code: -32002, data: { uri: 'test://nowhere' } } });
    const unsubscribe = await rawCall(stack.url, sessionId, 'resources/unsubscribe', { uri: 'test://nowhere' });
    expect(unsubscribe.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('announces resources and prompts list changes on the GET stream when a worker registers', async () => {
    const stack = await start({ tools: false });
    const { client } = await connectClient(stack.url);
    const heard: string[] = [];
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void heard.push('resources'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void heard.push('prompts'));
    const catalog = new OfferingCatalog({ redis: stack.redis, keys: stack.keys });
    await waitFor(async () => {
      await catalog.register({
        resources: [{ resource: { uri: 'test://late', name: 'late' }, queue: 'reads.late' }],
        templates: [],
        prompts: [{ prompt: { name: 'late' }, queue: 'reads.late', completable: [] }],
      });
      await sleepMs(50);
      return heard.includes('resources') && heard.includes('prompts');
    }, 'both list_changed notifications');
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['test://late']);
  });

  it('fails a read no worker answers within readTimeoutMs with -32603, cancelling it and removing its job', async () => {
    const stack = await start({ tools: false, gateway: { readTimeoutMs: 300 } });
    await new OfferingCatalog({ redis: stack.redis, keys: stack.keys }).register({
      resources: [{ resource: { uri: 'test://orphan', name: 'orphan' }, queue: 'reads.nobody' }],
      templates: [],
      prompts: [],
    });
    const { client } = await connectClient(stack.url);
    const started = Date.now();
    const error = await rejection(client.readResource({ uri: 'test://orphan' }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(error).toMatchObject({
      code: -32603,
      message: 'MCP error -32603: No worker answered resources/read within 300 ms; try again later.',
    });
    const records = (await stack.redis.keys(`${stack.keys.prefix}:*:task:*`)).filter((key) => !key.includes(':outbox'));
    expect(records).toHaveLength(1);
    expect(await stack.redis.hmget(records[0] as string, 'kind', 'status')).toEqual(['direct', 'cancelled']);
    const queues = new ToolQueues({ connection: stack.redis, keys: stack.keys });
    try {
      expect(await queues.queue('reads.nobody').getWaitingCount()).toBe(0);
    } finally {
      await queues.close();
    }
  });

  it('runs every read as its own job on the shared read queue of a worker that offers only resources', async () => {
    const stack = await start({ tools: false });
    const worker = createWorker({ redis: redis.url, prefix: redis.prefix, tools: [], resources: TEST_RESOURCES });
    try {
      await worker.ready;
      expect(worker.tools).toEqual([]);
      expect(worker.resources).toContain('test://items/{id}');
      const entries = await new OfferingCatalog({ redis: stack.redis, keys: stack.keys }).resources.list();
      expect(new Set(entries.map((entry) => entry.queue)).size).toBe(1);
      expect(entries[0]?.queue).toMatch(/^reads\.[A-Za-z0-9_-]{16}$/);
      const { client } = await connectClient(stack.url);
      const reads = await Promise.all(Array.from({ length: 20 }, () => client.readResource({ uri: 'test://notes' })));
      expect(new Set(reads.map((read) => JSON.stringify(read))).size).toBe(1);
    } finally {
      await worker.close({ deadlineMs: 500 });
    }
  });

  it('publishes a JSON Schema input as written and enforces it with ajv before anything runs', async () => {
    const strict = defineTool({
      name: 'strict',
      description: 'Takes a name and an address',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
        properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
        additionalProperties: false,
      },
      taskSupport: 'optional',
      handler: (args) => JSON.stringify(args),
    });
    const stack = await start({ tools: [strict] });
    const { client } = await connectClient(stack.url);
    const [tool] = (await client.listTools()).tools;
    expect(tool?.inputSchema).toEqual(strict.inputJsonSchema);
    expect(tool?.inputSchema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema' });
    expect(await client.callTool({ name: 'strict', arguments: { name: 'A', address: { city: 'B' } } })).toEqual({
      content: [{ type: 'text', text: '{"name":"A","address":{"city":"B"}}' }],
    });
    const extra = await client.callTool({ name: 'strict', arguments: { name: 'A', age: 3 } }, CallToolResultSchema);
    expect(extra).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/additional properties/) }] });
    const badRef = await rejection(
      client.request(
        { method: 'tools/call', params: { name: 'strict', arguments: { address: {} }, task: {} } },
        CreateTaskResultSchema,
      ),
    );
    expect(badRef.code).toBe(-32602);
    expect(badRef.message).toMatch(/must have required property 'city'/);
  });
});
