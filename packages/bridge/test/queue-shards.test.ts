import { describe, expect, it } from 'vitest';
import { BridgeConfigError, parseBridgeConfig } from '../src/config.js';

const config = (queueShards?: unknown) => ({
  connections: { legacy: { url: 'redis://127.0.0.1:6380/1' } },
  tools: [
    {
      name: 'render_report',
      description: 'Renders a report.',
      inputSchema: { type: 'object' },
      queue: { name: 'reports', connection: 'legacy' },
      job: { name: 'render' },
      ...(queueShards !== undefined && { queueShards }),
    },
  ],
});

describe('bridge config: queueShards', () => {
  it("takes a tool's queue shard count, absent by default (TASKGATE_QUEUE_SHARDS then applies)", () => {
    expect(parseBridgeConfig(config(3)).tools[0]?.queueShards).toBe(3);
    expect(parseBridgeConfig(config()).tools[0]?.queueShards).toBeUndefined();
  });

  it("takes a server's queue shard count and names the path of a bad one", () => {
    const servers = (queueShards: unknown) => ({
      servers: [{ name: 'everything', stdio: { command: 'mcp-server-everything' }, queueShards }],
    });
    expect(parseBridgeConfig(servers(4)).servers[0]?.queueShards).toBe(4);
    expect(() => parseBridgeConfig(servers(0))).toThrow(/servers\[0\]\.queueShards: /);
  });

  it('names the path of a shard count that is not a whole number from 1 to 64', () => {
    for (const bad of [0, 65, 1.5, 'three']) {
      let problems: readonly string[] = [];
      try {
        parseBridgeConfig(config(bad));
      } catch (error) {
        if (!(error instanceof BridgeConfigError)) throw error;
        problems = error.problems;
      }
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^tools\[0\]\.queueShards: /);
    }
  });
});
