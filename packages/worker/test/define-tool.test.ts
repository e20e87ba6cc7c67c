import { TaskgateError } from '@taskgate/core';
import { ToolSchema } from '@taskgate/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createWorker, defineTool, toCatalogEntry } from '../src/index.js';

const base = {
  description: 'A tool',
  inputSchema: z.object({}),
  taskSupport: 'optional' as const,
  handler: () => 'ok',
};

describe('defineTool', () => {
  it('[TOOL-1] publishes the JSON Schema, taskSupport, annotations, queue and retry policy', () => {
    const tool = defineTool({
      name: 'forecast',
      title: 'Forecast',
      description: 'Weather forecast for a city',
      inputSchema: z.object({
        city: z.string().min(1).describe('City name'),
        days: z.int().min(1).max(14).default(3),
        units: z.enum(['metric', 'imperial']).optional(),
      }),
      outputSchema: z.object({ summary: z.string(), highs: z.array(z.number()) }),
      taskSupport: 'required',
      annotations: { readOnlyHint: true, openWorldHint: true },
      attempts: 3,
      backoffMs: 250,
      handler: ({ days }) => ({ summary: 'sunny', highs: Array.from({ length: days }, () => 20) }),
    });
    const entry = toCatalogEntry(tool);
    expect(entry).toEqual({
      tool: {
        name: 'forecast',
        title: 'Forecast',
        description: 'Weather forecast for a city',
        inputSchema: {
          type: 'object',
          properties: {
            city: { type: 'string', minLength: 1, description: 'City name' },
            days: { type: 'integer', minimum: 1, maximum: 14, default: 3 },
            units: { type: 'string', enum: ['metric', 'imperial'] },
          },
          required: ['city'],
        },
        outputSchema: {
          type: 'object',
          properties: { summary: { type: 'string' }, highs: { type: 'array', items: { type: 'number' } } },
          required: ['summary', 'highs'],
          additionalProperties: false,
        },
        annotations: { readOnlyHint: true, openWorldHint: true },
        execution: { taskSupport: 'required' },
      },
      queue: 'tool.forecast',
      attempts: 3,
      backoffMs: 250,
    });
    expect(ToolSchema.parse(entry.tool)).toEqual(entry.tool);
  });

  it('applies defaults: attempts 1, concurrency 10, the tool’s own queue unless one is named', () => {
    const tool = defineTool({ ...base, name: 'a.b-c_D9' });
    expect(tool).toMatchObject({ queue: 'tool.a.b-c_D9', attempts: 1, concurrency: 10 });
    expect(toCatalogEntry(tool)).toEqual({
      tool: {
        name: 'a.b-c_D9',
        description: 'A tool',
        inputSchema: { type: 'object', properties: {} },
        execution: { taskSupport: 'optional' },
      },
      queue: 'tool.a.b-c_D9',
      attempts: 1,
    });
    expect(defineTool({ ...base, name: 'shared', queue: 'batch' }).queue).toBe('batch');
    expect(Object.isFrozen(tool)).toBe(true);
  });

  it('retryOnCrash: off by default, true allows 3 crash re-runs, a number that many', () => {
    expect(defineTool({ ...base, name: 't' }).crashReruns).toBe(0);
    expect(defineTool({ ...base, name: 't', retryOnCrash: false }).crashReruns).toBe(0);
    expect(defineTool({ ...base, name: 't', retryOnCrash: true }).crashReruns).toBe(3);
    expect(defineTool({ ...base, name: 't', retryOnCrash: 7 }).crashReruns).toBe(7);
    expect(defineTool({ ...base, name: 't', retryOnCrash: 0 }).crashReruns).toBe(0);
  });

  it('accepts MCP tool names of 1 to 128 characters of A-Z a-z 0-9 _ - .', () => {
    for (const name of ['x', 'X'.repeat(128), 'get_weather', 'admin.tools.list', 'DATA-export_v2']) {
      expect(defineTool({ ...base, name }).name).toBe(name);
    }
  });

  it('refuses names MCP does not allow', () => {
    for (const name of ['', 'X'.repeat(129), 'has space', 'a:b', 'a/b', 'ünï', 'a,b']) {
      expect(() => defineTool({ ...base, name })).toThrow(/names are 1-128 characters/);
    }
  });

  it('refuses schemas that are not objects or that JSON Schema cannot express', () => {
    const notObject = z.string() as unknown as z.ZodObject;
    expect(() => defineTool({ ...base, name: 't', inputSchema: notObject })).toThrow(
      "Invalid tool 't': inputSchema must describe an object",
    );
    expect(() => defineTool({ ...base, name: 't', inputSchema: z.object({ when: z.date() }) })).toThrow(
      /inputSchema cannot be expressed as JSON Schema/,
    );
    expect(() => defineTool({ ...base, name: 't', outputSchema: z.object({ at: z.date() }) })).toThrow(
      /outputSchema cannot be expressed as JSON Schema/,
    );
  });

  it('refuses bad settings with a TaskgateError naming the field', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ attempts: 0 }, /attempts must be an integer of at least 1, got 0/],
      [{ attempts: 1.5 }, /attempts must be an integer/],
      [{ retryOnCrash: -1 }, /retryOnCrash must be true, false or an integer from 0 to 100, got -1/],
      [{ retryOnCrash: 101 }, /retryOnCrash must be true, false or an integer from 0 to 100, got 101/],
      [{ retryOnCrash: 'yes' }, /retryOnCrash must be true, false or an integer/],
      [{ concurrency: 0 }, /concurrency must be an integer of at least 1/],
      [{ backoffMs: -1 }, /backoffMs must be an integer of at least 0/],
      [{ timeoutMs: 0 }, /timeoutMs must be an integer of at least 1/],
      [{ rateLimit: { max: 0, durationMs: 1000 } }, /rateLimit.max must be/],
      [{ queue: 'a:b' }, /queue 'a:b' must be/],
      [{ description: ' ' }, /description must be a non-empty string/],
      [{ taskSupport: 'always' }, /taskSupport must be/],
      [{ annotations: { readOnlyHint: 'yes' } }, /annotations do not match/],
      [{ handler: 'nope' }, /handler must be a function/],
    ];
    for (const [override, message] of cases) {
      let thrown: unknown;
      try {
        defineTool({ ...base, name: 't', ...override } as Parameters<typeof defineTool>[0]);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(override)).toBeInstanceOf(TaskgateError);
      expect((thrown as TaskgateError).code).toBe('INVALID_CONFIG');
      expect((thrown as Error).message).toMatch(message);
    }
  });
});

describe('createWorker configuration', () => {
  // These fail before any connection is made, so no Redis is needed.
  const redis = 'redis://127.0.0.1:1';

  it('refuses two tools of the same name, and an empty tool list', () => {
    const tool = defineTool({ ...base, name: 'twice' });
    expect(() => createWorker({ redis, tools: [tool, tool] })).toThrow("Two tools are named 'twice'");
    expect(() => createWorker({ redis, tools: [] })).toThrow('createWorker needs at least one tool');
  });

  it('refuses different rate limits on one shared queue', () => {
    const a = defineTool({ ...base, name: 'a', queue: 'shared', rateLimit: { max: 1, durationMs: 1000 } });
    const b = defineTool({ ...base, name: 'b', queue: 'shared', rateLimit: { max: 2, durationMs: 1000 } });
    expect(() => createWorker({ redis, tools: [a, b] })).toThrow(
      "Tools 'a' and 'b' share queue 'shared' but declare different rate limits",
    );
  });

  it('queue shards: tools sharing a queue agree on queueShards; the catalog entry carries the count only above 1', () => {
    const a = defineTool({ ...base, name: 'a', queue: 'shared', queueShards: 3 });
    const b = defineTool({ ...base, name: 'b', queue: 'shared' });
    expect(() => createWorker({ redis, tools: [a, b] })).toThrow(
      "Tools 'a' and 'b' share queue 'shared' but have 3 and 1 queueShards",
    );
    expect(() => createWorker({ redis, tools: [a, b], queueShards: 2 })).toThrow('have 3 and 2 queueShards');
    expect(toCatalogEntry(a).queueShards).toBe(3);
    expect(toCatalogEntry(b, 4).queueShards).toBe(4);
    expect('queueShards' in toCatalogEntry(b)).toBe(false);
    expect(() => createWorker({ redis, tools: [b], queueShards: 0 })).toThrow(
      'queueShards must be a whole number from 1 to 64, got 0',
    );
    for (const queueShards of [0, 65, 1.5]) {
      expect(() => defineTool({ ...base, name: 'bad', queueShards })).toThrow(
        "Invalid tool 'bad': queueShards must be a whole number from 1 to 64",
      );
    }
  });

  it('refuses non-positive timings', () => {
    const tool = defineTool({ ...base, name: 't' });
    expect(() => createWorker({ redis, tools: [tool], lockDurationMs: 0 })).toThrow(
      'lockDurationMs must be a positive number of milliseconds, got 0',
    );
  });
});
