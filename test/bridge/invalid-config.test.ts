import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { forkNode } from '@taskgate/test-harness';
import { afterAll, describe, expect, it } from 'vitest';
import { bridgeConfig, configFolder, removeConfigs, writeConfig } from './support.js';

const run = fileURLToPath(new URL('../../packages/cli/src/run.ts', import.meta.url));

/** Runs `taskgate bridge` to its exit (it must not need Redis to refuse a config). */
async function bridgeExit(args: string[], env: Record<string, string> = {}) {
  const proc = forkNode(run, ['bridge', ...args], { REDIS_URL: 'redis://127.0.0.1:1', ...env });
  const code = await proc.exited;
  return { code, output: proc.output() };
}

afterAll(removeConfigs);

describe('taskgate bridge: invalid configuration', () => {
  it('exits non-zero naming the path of every problem', async () => {
    const config = bridgeConfig('redis://127.0.0.1:6380');
    const tools = config.tools as Record<string, unknown>[];
    tools[0] = { ...tools[0], queue: { name: 'reports', connection: 'x' } };
    tools[1] = { ...tools[1], taskSupport: 'sometimes', inputSchema: { type: 'string' } };
    const path = writeConfig(config);
    const { code, output } = await bridgeExit(['--config', path]);
    expect(code).toBe(2);
    expect(output).toContain(`${path}: tools[1].taskSupport:`);
    expect(output).toContain(`${path}: tools[1].inputSchema: must be a JSON Schema object with type: "object"`);
    // Reference checks run once the shapes are right.
    tools[1] = (bridgeConfig('redis://127.0.0.1:6380').tools as Record<string, unknown>[])[1] as Record<
      string,
      unknown
    >;
    const second = await bridgeExit(['--config', writeConfig(config)]);
    expect(second.code).toBe(2);
    expect(second.output).toMatch(/tools\[0\]\.queue\.connection: unknown connection "x"/);
  });

  it('exits non-zero naming the path of a bad amqp: tool or AMQP connection', async () => {
    const config = {
      connections: { rabbit: { url: 'amqp://127.0.0.1:1/%2F' }, legacy: { url: 'redis://127.0.0.1:6380' } },
      tools: [
        {
          name: 'fib',
          description: 'Fibonacci.',
          inputSchema: { type: 'object' },
          amqp: { connection: 'legacy', routingKey: 'rpc_queue' },
        },
        {
          name: 'report',
          description: 'Report.',
          inputSchema: { type: 'object' },
          queue: { name: 'reports', connection: 'rabbit' },
          job: { name: 'render' },
        },
      ],
    };
    const path = writeConfig(config);
    const { code, output } = await bridgeExit(['--config', path]);
    expect(code).toBe(2);
    expect(output).toContain(
      `${path}: tools[0].amqp.connection: "legacy" is not an AMQP connection (its url must start with amqp:// or amqps://)`,
    );
    expect(output).toContain(`${path}: tools[1].queue.connection: "rabbit" is AMQP; a BullMQ queue lives in Redis`);
  });

  it('exits non-zero when the file is missing, not YAML, or no file is named', async () => {
    const absent = join(configFolder(), 'absent.yaml');
    const missing = await bridgeExit(['--config', absent]);
    expect(missing.code).toBe(2);
    expect(missing.output).toContain(`TASKGATE_BRIDGE_CONFIG (--config): cannot read ${absent}`);
    const broken = await bridgeExit([], { TASKGATE_BRIDGE_CONFIG: writeConfig(undefined, 'tools: [unclosed') });
    expect(broken.code).toBe(2);
    expect(broken.output).toContain('(root): not valid YAML');
    const none = await bridgeExit([]);
    expect(none.code).toBe(2);
    expect(none.output).toContain('TASKGATE_BRIDGE_CONFIG (--config) names no file');
  });
});
