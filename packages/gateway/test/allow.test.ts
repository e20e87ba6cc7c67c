import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ToolCatalog } from '@taskgate/core';
import { connectClient, sleepMs, useRedis, waitFor } from '@taskgate/test-harness';
import { definePrompt, defineResource, defineResourceTemplate, defineTool } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rejection } from './support/rejection.js';
import { rev2026Request } from './support/rev2026-07-28.js';
import { type Stack, useStacks } from './support/stack.js';

// `allow` on catalog entries: who lists and uses a tool, resource, template or prompt, on both revisions.

const TOKENS = { 'alice-token-0123456789': 'team-a/alice', 'bob-token-0123456789': 'bob' };
const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789';
const TEAM = ['team-a/*'];

const open = defineTool({
  name: 'open_echo',
  description: 'Anyone may call it',
  inputSchema: z.object({ text: z.string() }),
  taskSupport: 'forbidden',
  handler: ({ text }) => text,
});
const team = defineTool({
  name: 'team_echo',
  description: 'Team A only',
  inputSchema: z.object({ text: z.string() }),
  taskSupport: 'optional',
  allow: TEAM,
  handler: ({ text }) => `team: ${text}`,
});
const resources = [
  defineResource({ uri: 'test://open', name: 'open', read: () => 'open text' }),
  defineResource({ uri: 'team://plan', name: 'plan', allow: TEAM, read: () => 'the plan' }),
  defineResourceTemplate({
    uriTemplate: 'team://notes/{id}',
    name: 'note',
    allow: TEAM,
    read: ({ id }) => `note ${String(id)}`,
    complete: { id: () => ['1', '2'] },
  }),
];
const prompts = [
  definePrompt({
    name: 'team_prompt',
    allow: TEAM,
    arguments: z.object({ topic: z.string() }),
    get: ({ topic }) => `Talk about ${topic}`,
    complete: { topic: () => ['plans'] },
  }),
];

/** What each of the three callers may do with everything: lists and the refusals, on revision 2025-11-25. */
async function seen(client: Client) {
  return {
    tools: (await client.listTools()).tools.map((tool) => tool.name),
    resources: (await client.listResources()).resources.map((resource) => resource.uri),
    templates: (await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate),
    prompts: (await client.listPrompts()).prompts.map((prompt) => prompt.name),
  };
}

describe('allow: entries only some principals see and use', () => {
  const redis = useRedis();
  const start = useStacks(redis);
  const withAuth = (): Promise<Stack> =>
    start({
      tools: [open, team],
      worker: { resources, prompts },
      gateway: { auth: { mode: 'tokens', tokens: TOKENS } },
    });

  it('2025-11-25: a principal inside allow lists and uses the entries; one outside neither lists nor uses them', async () => {
    const stack = await withAuth();
    const { client: alice } = await connectClient(stack.url, { token: ALICE });
    const { client: bob } = await connectClient(stack.url, { token: BOB });
    expect(await seen(alice)).toEqual({
      tools: ['open_echo', 'team_echo'],
      resources: ['team://plan', 'test://open'],
      templates: ['team://notes/{id}'],
      prompts: ['team_prompt'],
    });
    expect(await seen(bob)).toEqual({ tools: ['open_echo'], resources: ['test://open'], templates: [], prompts: [] });

    expect(await alice.callTool({ name: 'team_echo', arguments: { text: 'hi' } })).toEqual({
      content: [{ type: 'text', text: 'team: hi' }],
    });
    expect((await alice.readResource({ uri: 'team://notes/7' })).contents).toEqual([
      { uri: 'team://notes/7', mimeType: 'text/plain', text: 'note 7' },
    ]);
    expect((await alice.getPrompt({ name: 'team_prompt', arguments: { topic: 'x' } })).messages).toHaveLength(1);
    const completion = {
      ref: { type: 'ref/prompt' as const, name: 'team_prompt' },
      argument: { name: 'topic', value: '' },
    };
    expect((await alice.complete(completion)).completion.values).toEqual(['plans']);

    // Bob gets exactly what he would for an entry that does not exist.
    const refused = async (hidden: Promise<unknown>, unknown: Promise<unknown>) => {
      const [a, b] = await Promise.all([rejection(hidden), rejection(unknown)]);
      return { hidden: a, unknown: b };
    };
    const tool = await refused(
      bob.callTool({ name: 'team_echo', arguments: { text: 'hi' } }),
      bob.callTool({ name: 'nope_echo', arguments: { text: 'hi' } }),
    );
    expect(tool.hidden).toEqual({
      code: -32602,
      message: "MCP error -32602: Unknown tool: 'team_echo'. Call tools/list to see the available tools.",
    });
    expect(tool.unknown.message.replace('nope_echo', 'team_echo')).toBe(tool.hidden.message);
    const asTask = await rejection(
      bob.request(
        { method: 'tools/call', params: { name: 'team_echo', arguments: { text: 'x' }, task: {} } },
        z.object({}).loose(),
      ),
    );
    expect(asTask).toEqual(tool.hidden);
    for (const uri of ['team://plan', 'team://notes/7']) {
      const read = await refused(bob.readResource({ uri }), bob.readResource({ uri: 'team://nothing' }));
      expect(read.hidden.code).toBe(-32002);
      expect(read.hidden).toEqual({
        ...read.unknown,
        message: read.unknown.message.replace('team://nothing', uri),
        data: { uri },
      });
    }
    const prompt = await refused(
      bob.getPrompt({ name: 'team_prompt', arguments: { topic: 'x' } }),
      bob.getPrompt({ name: 'nope_prompt', arguments: { topic: 'x' } }),
    );
    expect(prompt.hidden.code).toBe(-32602);
    expect(prompt.unknown.message.replace('nope_prompt', 'team_prompt')).toBe(prompt.hidden.message);
    const complete = await refused(
      bob.complete(completion),
      bob.complete({ ...completion, ref: { type: 'ref/prompt', name: 'nope_prompt' } }),
    );
    expect(complete.hidden.code).toBe(-32602);
    expect(complete.unknown.message.replace('nope_prompt', 'team_prompt')).toBe(complete.hidden.message);
    const template = await rejection(
      bob.complete({ ref: { type: 'ref/resource', uri: 'team://notes/{id}' }, argument: { name: 'id', value: '' } }),
    );
    expect(template).toEqual({
      code: -32602,
      message:
        "MCP error -32602: Unknown resource template: 'team://notes/{id}'. Call resources/templates/list to see the templates.",
    });
    const subscribe = await rejection(bob.subscribeResource({ uri: 'team://plan' }));
    expect(subscribe.code).toBe(-32002);
    await alice.subscribeResource({ uri: 'team://plan' });
  });

  it('2026-07-28: the same lists and the same refusals, request by request', async () => {
    const stack = await withAuth();
    const list = async (token: string, method: string, field: string, key: string) => {
      const { body } = await rev2026Request(stack.url, method, {}, { token });
      const items = body.result?.[field];
      if (!Array.isArray(items)) throw new Error(`${method} answered ${JSON.stringify(body)}`);
      return (items as Record<string, unknown>[]).map((entry) => entry[key]);
    };
    expect(await list(ALICE, 'tools/list', 'tools', 'name')).toEqual(['open_echo', 'team_echo']);
    expect(await list(BOB, 'tools/list', 'tools', 'name')).toEqual(['open_echo']);
    expect(await list(BOB, 'resources/list', 'resources', 'uri')).toEqual(['test://open']);
    expect(await list(BOB, 'resources/templates/list', 'resourceTemplates', 'uriTemplate')).toEqual([]);
    expect(await list(BOB, 'prompts/list', 'prompts', 'name')).toEqual([]);
    expect(await list(ALICE, 'prompts/list', 'prompts', 'name')).toEqual(['team_prompt']);

    const call = (token: string, name: string) =>
      rev2026Request(stack.url, 'tools/call', { name, arguments: { text: 'hi' } }, { token });
    const allowed = await call(ALICE, 'team_echo');
    expect(allowed.body.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'team: hi' }],
    });
    const [hidden, unknown] = await Promise.all([call(BOB, 'team_echo'), call(BOB, 'nope_echo')]);
    expect(hidden.status).toBe(unknown.status);
    expect(hidden.body.error).toEqual({
      code: -32602,
      message: "Unknown tool: 'team_echo'. Call tools/list to see the available tools.",
    });
    expect(unknown.body.error?.message.replace('nope_echo', 'team_echo')).toBe(hidden.body.error?.message);

    const read = (token: string, uri: string) => rev2026Request(stack.url, 'resources/read', { uri }, { token });
    expect((await read(ALICE, 'team://plan')).body.result).toMatchObject({ contents: [{ text: 'the plan' }] });
    const [hiddenRead, unknownRead] = await Promise.all([read(BOB, 'team://plan'), read(BOB, 'team://nothing')]);
    expect(hiddenRead.status).toBe(unknownRead.status);
    expect(hiddenRead.body.error?.code).toBe(-32602);
    expect(hiddenRead.body.error?.message).toBe(
      unknownRead.body.error?.message.replace('team://nothing', 'team://plan'),
    );
    const get = await rev2026Request(
      stack.url,
      'prompts/get',
      { name: 'team_prompt', arguments: { topic: 'x' } },
      { token: BOB },
    );
    expect(get.body.error).toEqual({
      code: -32602,
      message: "Unknown prompt: 'team_prompt'. Call prompts/list to see the prompts.",
    });
  });

  it('auth off: entries with allow are hidden from every caller, the others are served as before', async () => {
    const stack = await start({ tools: [open, team], worker: { resources, prompts } });
    const { client } = await connectClient(stack.url);
    expect(await seen(client)).toEqual({
      tools: ['open_echo'],
      resources: ['test://open'],
      templates: [],
      prompts: [],
    });
    const refused = await rejection(client.callTool({ name: 'team_echo', arguments: { text: 'hi' } }));
    expect(refused.message).toMatch(/Unknown tool: 'team_echo'/);
    const { body } = await rev2026Request(stack.url, 'tools/list');
    expect(body.result?.tools).toEqual([expect.objectContaining({ name: 'open_echo' })]);
  });

  it('list_changed reaches every session; only the allowed principal then lists the new entry', async () => {
    const stack = await withAuth();
    const { client: alice } = await connectClient(stack.url, { token: ALICE });
    const { client: bob } = await connectClient(stack.url, { token: BOB });
    const heard = { alice: 0, bob: 0 };
    alice.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.alice++);
    bob.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.bob++);
    const catalog = new ToolCatalog({ redis: stack.redis, keys: stack.keys });
    const late = {
      tool: {
        name: 'team_late',
        inputSchema: { type: 'object' as const },
        execution: { taskSupport: 'optional' as const },
      },
      queue: 'tools.late',
      attempts: 1,
      allow: TEAM,
    };
    // The GET streams subscribe shortly after connecting: register until both heard the news.
    await waitFor(async () => {
      await catalog.register([late]);
      await sleepMs(50);
      return heard.alice > 0 && heard.bob > 0;
    }, 'list_changed on both sessions');
    expect((await alice.listTools()).tools.map((tool) => tool.name)).toEqual(['open_echo', 'team_echo', 'team_late']);
    expect((await bob.listTools()).tools.map((tool) => tool.name)).toEqual(['open_echo']);
  });
});
