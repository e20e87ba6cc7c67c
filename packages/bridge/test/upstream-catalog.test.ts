import { noopLogger } from '@taskgate/core';
import { toCatalogEntry } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { loadBridgeConfig } from '../src/config.js';
import { upstreamToolDefinitions } from '../src/upstream/upstream-catalog.js';
import type { UpstreamPool } from '../src/upstream/upstream-pool.js';
import { upstreamReadDefinitions } from '../src/upstream/upstream-reads.js';

const config = loadBridgeConfig(`
servers:
  - name: everything
    http: { url: http://127.0.0.1:3001/mcp }
    inlineWaitMs: 1000
    queueShards: 3
    allow: ["team-a/*", alice]
    tools:
      exclude: ["*-env"]
      overrides:
        slow: { taskSupport: required, description: Runs slowly., retryOnCrash: true }
`);
const server = config.servers[0] as NonNullable<(typeof config.servers)[0]>;

const upstreamTools = [
  {
    name: 'slow',
    title: 'Slow',
    description: 'Upstream text.',
    inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' as const, properties: {} },
    outputSchema: { type: 'object' as const, properties: { n: { type: 'number' } } },
    annotations: { readOnlyHint: true },
  },
  { name: 'research', inputSchema: { type: 'object' as const }, execution: { taskSupport: 'required' as const } },
  { name: 'get-env', description: 'Env.', inputSchema: { type: 'object' as const } },
];

describe('upstream tools as taskgate tools', () => {
  const definitions = upstreamToolDefinitions(
    server,
    upstreamTools,
    (tool) => tool.execution?.taskSupport === 'required',
    async () => ({ content: [] }),
    noopLogger,
  );

  it('publishes the selected tools under the prefix, on the server queue, with the overrides', () => {
    expect(definitions.map((definition) => definition.name)).toEqual(['everything_slow', 'everything_research']);
    const [slow, research] = definitions.map((definition) => toCatalogEntry(definition));
    expect(slow).toEqual({
      tool: {
        name: 'everything_slow',
        title: 'Slow',
        description: 'Runs slowly.',
        // A draft-07 `$schema` is left out: the gateways validate 2020-12, MCP's default.
        inputSchema: { type: 'object', properties: {} },
        outputSchema: { type: 'object', properties: { n: { type: 'number' } } },
        annotations: { readOnlyHint: true },
        execution: { taskSupport: 'required' },
      },
      queue: 'upstream.everything',
      queueShards: 3,
      attempts: 1,
      inlineWaitMs: 1000,
      allow: ['team-a/*', 'alice'],
    });
    // Without a description upstream, the title or the name stands in (MCP clients choose tools by it).
    expect(research?.tool).toMatchObject({ description: 'research', execution: { taskSupport: 'optional' } });
  });

  it('re-runs after a bridge crash only what resumes an upstream task, or what the override allows', () => {
    const [slow, research] = definitions;
    expect(slow?.crashReruns).toBe(3);
    expect(research?.crashReruns).toBe(100);
    const echo = { name: 'echo', description: 'Echoes.', inputSchema: { type: 'object' as const } };
    const [plain] = upstreamToolDefinitions(
      server,
      [echo],
      () => false,
      async () => ({ content: [] }),
      noopLogger,
    );
    expect(plain?.crashReruns).toBe(0);
  });

  it("gives the server's resources, templates and prompts its allow list", () => {
    const reads = upstreamReadDefinitions(
      server,
      {
        resources: [{ uri: 'demo://a', name: 'a' }],
        templates: [{ uriTemplate: 'demo://t/{id}', name: 't' }],
        prompts: [{ name: 'p' }],
      },
      // Never asked: nothing is read here.
      undefined as unknown as UpstreamPool,
      noopLogger,
    );
    expect(reads.resources.map((definition) => [definition.kind, definition.allow])).toEqual([
      ['resource', ['team-a/*', 'alice']],
      ['resourceTemplate', ['team-a/*', 'alice']],
    ]);
    expect(reads.prompts.map((definition) => [definition.prompt.name, definition.allow])).toEqual([
      ['everything_p', ['team-a/*', 'alice']],
    ]);
  });
});
