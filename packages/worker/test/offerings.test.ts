import { TaskgateError } from '@taskgate/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePrompt, defineResource, defineResourceTemplate, defineTool, ToolOutputError } from '../src/index.js';
import { completionResult, promptResult, readResourceResult } from '../src/read-results.js';

function configError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TaskgateError);
    expect((error as TaskgateError).code).toBe('INVALID_CONFIG');
    return (error as Error).message;
  }
  throw new Error('expected a configuration error');
}

describe('defineResource and defineResourceTemplate', () => {
  it('describes a resource as resources/list shows it', () => {
    const def = defineResource({
      uri: 'file:///notes.txt',
      name: 'notes',
      title: 'Notes',
      mimeType: 'text/plain',
      size: 12,
      annotations: { audience: ['user'] },
      read: () => 'x',
    });
    expect(def.kind).toBe('resource');
    expect(def.resource).toEqual({
      uri: 'file:///notes.txt',
      name: 'notes',
      title: 'Notes',
      mimeType: 'text/plain',
      size: 12,
      annotations: { audience: ['user'] },
    });
  });

  it('refuses what would not make a valid resource, naming the field', () => {
    expect(configError(() => defineResource({ uri: 'notes.txt', name: 'n', read: () => '' }))).toMatch(/absolute URI/);
    expect(configError(() => defineResource({ uri: 'a://b', name: ' ', read: () => '' }))).toMatch(/name must be/);
    expect(configError(() => defineResource({ uri: 'a://b', name: 'n', size: -1, read: () => '' }))).toMatch(/size/);
    expect(configError(() => defineResource({ uri: 'a://b', name: 'n', queue: 'a:b', read: () => '' }))).toMatch(
      /queue 'a:b'/,
    );
  });

  it('parses a template once and refuses templates without variables or with unknown completers', () => {
    const def = defineResourceTemplate({
      uriTemplate: 'db://{table}/{id}',
      name: 'row',
      read: (vars) => JSON.stringify(vars),
      complete: { table: () => ['users'] },
    });
    expect(def.parsed.match('db://users/7')).toEqual({ table: 'users', id: '7' });
    expect(Object.keys(def.complete)).toEqual(['table']);
    expect(configError(() => defineResourceTemplate({ uriTemplate: 'db://all', name: 'x', read: () => '' }))).toMatch(
      /no \{variables\}; use defineResource/,
    );
    expect(
      configError(() =>
        defineResourceTemplate({ uriTemplate: 'db://{id}', name: 'x', read: () => '', complete: { row: () => [] } }),
      ),
    ).toMatch(/complete\.row names no argument \(known: id\)/);
    expect(configError(() => defineResourceTemplate({ uriTemplate: 'db://{id*}', name: 'x', read: () => '' }))).toMatch(
      /modifiers/,
    );
  });
});

describe('definePrompt', () => {
  it('derives the prompt arguments from a zod object of strings', () => {
    const def = definePrompt({
      name: 'review',
      arguments: z.object({
        code: z.string().describe('The code to review'),
        language: z.enum(['ts', 'py']).optional(),
      }),
      get: ({ code }) => code,
      complete: { language: () => ['ts', 'py'] },
    });
    expect(def.prompt).toEqual({
      name: 'review',
      arguments: [
        { name: 'code', description: 'The code to review', required: true },
        { name: 'language', required: false },
      ],
    });
    expect(definePrompt({ name: 'plain', get: () => 'x' }).prompt).toEqual({ name: 'plain' });
  });

  it('refuses arguments that are not strings and completers of unknown arguments', () => {
    expect(
      configError(() => definePrompt({ name: 'p', arguments: z.object({ n: z.number() }), get: () => '' })),
    ).toMatch(/argument 'n' must be a string schema/);
    expect(configError(() => definePrompt({ name: 'p', get: () => '', complete: { x: () => [] } }))).toMatch(
      /complete\.x names no argument/,
    );
    expect(configError(() => definePrompt({ name: '', get: () => '' }))).toMatch(/name must be 1-128 characters/);
  });
});

describe('results of reads', () => {
  it('maps text, bytes, contents and whole results of a resource read', () => {
    expect(readResourceResult('a://b', undefined, 'hi')).toEqual({
      contents: [{ uri: 'a://b', mimeType: 'text/plain', text: 'hi' }],
    });
    expect(readResourceResult('a://b', 'image/png', new Uint8Array([1, 2, 3]))).toEqual({
      contents: [{ uri: 'a://b', mimeType: 'image/png', blob: 'AQID' }],
    });
    expect(readResourceResult('a://b', 'text/csv', { text: 'x,y' })).toEqual({
      contents: [{ uri: 'a://b', mimeType: 'text/csv', text: 'x,y' }],
    });
    expect(readResourceResult('a://b', undefined, { contents: [{ uri: 'a://c', blob: 'AQID' }] })).toEqual({
      contents: [{ uri: 'a://c', blob: 'AQID' }],
    });
    expect(() => readResourceResult('a://b', undefined, { nope: 1 } as never)).toThrow(ToolOutputError);
  });

  it('maps prompt returns to messages', () => {
    expect(promptResult('hello')).toEqual({ messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }] });
    expect(() => promptResult([{ role: 'system', content: { type: 'text', text: 'x' } }] as never)).toThrow(
      /invalid result/,
    );
  });

  it('caps completions at 100 values and says how many there were', () => {
    const many = Array.from({ length: 120 }, (_, i) => `v${i}`);
    expect(completionResult(many).completion).toMatchObject({ total: 120, hasMore: true });
    expect(completionResult(many).completion.values).toHaveLength(100);
    expect(completionResult({ values: ['a'], total: 9, hasMore: true })).toEqual({
      completion: { values: ['a'], total: 9, hasMore: true },
    });
    expect(completionResult(['a'])).toEqual({ completion: { values: ['a'] } });
    expect(() => completionResult([1] as never)).toThrow(/array of strings/);
  });
});

describe('defineTool with a JSON Schema input', () => {
  it('publishes the schema exactly as written and passes the arguments through', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object' as const,
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } } } },
      properties: { at: { $ref: '#/$defs/point' } },
      additionalProperties: false,
    };
    const tool = defineTool({
      name: 'raw',
      description: 'd',
      inputSchema: schema,
      taskSupport: 'optional',
      handler: () => 'ok',
    });
    expect(tool.inputJsonSchema).toEqual(schema);
    expect(tool.inputSchema.parse({ at: { x: 1 }, extra: true })).toEqual({ at: { x: 1 }, extra: true });
    expect(
      configError(() =>
        defineTool({
          name: 'raw',
          description: 'd',
          inputSchema: { type: 'array' } as never,
          taskSupport: 'optional',
          handler: () => '',
        }),
      ),
    ).toMatch(/JSON Schema with type "object"/);
  });
});
