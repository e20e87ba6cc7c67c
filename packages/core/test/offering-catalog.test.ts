import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { EventBus, Keys, OfferingCatalog, type Offerings, ToolCatalog } from '../src/index.js';
import { sleep, waitFor } from './support.js';

const offerings: Offerings = {
  resources: [
    { resource: { uri: 'test://b', name: 'b' }, queue: 'reads.1' },
    { resource: { uri: 'test://a', name: 'a', mimeType: 'text/plain' }, queue: 'reads.1' },
  ],
  templates: [
    { template: { uriTemplate: 'test://items/{id}', name: 'item' }, queue: 'reads.1', completable: ['id'] },
    { template: { uriTemplate: 'test://{+path}', name: 'anything' }, queue: 'reads.2', completable: [] },
  ],
  prompts: [
    { prompt: { name: 'greet', arguments: [{ name: 'who', required: true }] }, queue: 'reads.1', completable: [] },
  ],
};

describe('OfferingCatalog', () => {
  const redis = useRedis();
  const catalog = (staleAfterMs?: number) =>
    new OfferingCatalog({
      redis: redis.connect(),
      keys: new Keys(redis.prefix),
      ...(staleAfterMs !== undefined && { staleAfterMs }),
    });

  it('lists each kind sorted by its key, beside the tools and without touching them', async () => {
    const offered = catalog();
    await offered.register(offerings);
    expect((await offered.resources.list()).map((entry) => entry.resource.uri)).toEqual(['test://a', 'test://b']);
    expect((await offered.templates.list()).map((entry) => entry.template.uriTemplate)).toEqual([
      'test://items/{id}',
      'test://{+path}',
    ]);
    expect(await offered.prompts.get('greet')).toEqual(offerings.prompts[0]);
    expect(await new ToolCatalog({ redis: redis.connect(), keys: new Keys(redis.prefix) }).list()).toEqual([]);
  });

  it('resolves a URI to its static resource first, then to the first template describing it', async () => {
    const offered = catalog();
    await offered.register(offerings);
    expect(await offered.resolve('test://a', undefined)).toEqual({ kind: 'resource', entry: offerings.resources[1] });
    expect(await offered.resolve('test://items/42', undefined)).toEqual({
      kind: 'template',
      entry: offerings.templates[0],
      variables: { id: '42' },
    });
    expect(await offered.resolve('test://other/x', undefined)).toMatchObject({
      kind: 'template',
      variables: { path: 'other/x' },
    });
    expect(await offered.resolve('nope://x', undefined)).toBeUndefined();
  });

  it('passes over the entries a principal may not see, as if they were absent', async () => {
    const offered = catalog();
    const hidden: Offerings = {
      resources: [{ resource: { uri: 'test://items/7', name: 'seven' }, queue: 'reads.3', allow: ['team-a/*'] }],
      templates: [
        {
          template: { uriTemplate: 'test://items/{id}', name: 'item' },
          queue: 'reads.3',
          completable: [],
          allow: ['bob'],
        },
      ],
      prompts: [],
    };
    await offered.register(hidden);
    const seven = await offered.resolve('test://items/7', 'team-a/alice');
    expect(seven).toEqual({ kind: 'resource', entry: hidden.resources[0] });
    // Bob may not see the resource but may use the template that also describes its URI.
    expect(await offered.resolve('test://items/7', 'bob')).toMatchObject({ kind: 'template', variables: { id: '7' } });
    expect(await offered.resolve('test://items/7', 'carol')).toBeUndefined();
    expect(await offered.resolve('test://items/7', undefined)).toBeUndefined();
  });

  it('drops entries whose workers stopped announcing them, and keeps those still heartbeating', async () => {
    const offered = catalog(150);
    await offered.register(offerings);
    const kept: Offerings = { resources: offerings.resources.slice(0, 1), templates: [], prompts: offerings.prompts };
    for (let i = 0; i < 4; i++) {
      await sleep(60);
      await offered.heartbeat(kept);
    }
    expect((await offered.resources.list()).map((entry) => entry.resource.uri)).toEqual(['test://b']);
    expect(await offered.templates.list()).toEqual([]);
    expect(await offered.resolve('test://items/1', undefined)).toBeUndefined();
    expect(await offered.prompts.get('greet')).toBeDefined();
  });

  it('announces registrations on the resources and prompts channels (list_changed news)', async () => {
    const keys = new Keys(redis.prefix);
    const bus = new EventBus(redis.connect(), keys);
    const heard: string[] = [];
    try {
      await bus.subscribe(keys.catalogChannel('resources'), () => heard.push('resources'));
      await bus.subscribe(keys.catalogChannel('prompts'), () => heard.push('prompts'));
      await catalog().register(offerings);
      // Resources and templates share one channel: one list_changed notification covers both lists.
      await waitFor(() => heard.length === 3, 'three announcements');
      expect(heard.sort()).toEqual(['prompts', 'resources', 'resources']);
      expect(keys.catalogChannel('resourceTemplates')).toBe(keys.catalogChannel('resources'));
    } finally {
      await bus.close();
    }
  });

  it('rewrites entries on heartbeats without announcing, so a shared entry follows a live worker', async () => {
    const keys = new Keys(redis.prefix);
    const offered = catalog();
    const bus = new EventBus(redis.connect(), keys);
    let announcements = 0;
    try {
      await bus.subscribe(keys.catalogChannel('resources'), () => {
        announcements += 1;
      });
      await offered.register(offerings);
      await waitFor(() => announcements === 2, 'the registration');
      // Another worker serves test://a from its own queue and heartbeats: the entry now routes there.
      const other: Offerings = {
        resources: [{ resource: { uri: 'test://a', name: 'a' }, queue: 'reads.other' }],
        templates: [],
        prompts: [],
      };
      await offered.heartbeat(other);
      expect(await offered.resources.get('test://a')).toEqual(other.resources[0]);
      await sleep(50);
      expect(announcements).toBe(2);
    } finally {
      await bus.close();
    }
  });
});
