import { describe, expect, it } from 'vitest';
import {
  BridgeConfigError,
  type BridgedToolConfig,
  isCeleryTool,
  isQueueTool,
  loadBridgeConfig,
  parseBridgeConfig,
} from '../src/config.js';
import { completedResult, failedResult, jobData, progressOf } from '../src/mapping.js';

const yaml = `
connections:
  legacy: { url: redis://127.0.0.1:6380/1 }
tools:
  - name: render_report
    description: Renders a report.
    inputSchema: { type: object, properties: { n: { type: integer }, who: { type: object } }, required: [n] }
    outputSchema: { type: object, properties: { pages: { type: integer } } }
    queue: { name: reports, connection: legacy }
    job:
      name: render
      options: { attempts: 3, backoff: { type: exponential, delay: 1000 } }
      data: { count: $.n, owner: $.who.name, all: $, fixed: [1, $.n], kind: report }
`;

function problems(input: unknown): readonly string[] {
  try {
    parseBridgeConfig(input);
  } catch (error) {
    if (error instanceof BridgeConfigError) return error.problems;
    throw error;
  }
  throw new Error('the config was accepted');
}

describe('bridge config', () => {
  it('reads the documented YAML with its defaults', () => {
    const config = loadBridgeConfig(yaml);
    const [tool] = config.tools.filter((entry) => !isCeleryTool(entry)) as BridgedToolConfig[];
    expect(tool?.taskSupport).toBe('required');
    expect(tool?.result).toBe('auto');
    expect(tool?.queue).toEqual({ name: 'reports', prefix: 'bull', connection: 'legacy' });
    expect(tool?.job.options).toEqual({ attempts: 3, backoff: { type: 'exponential', delay: 1000 } });
  });

  it('names the path of every problem', () => {
    const config = loadBridgeConfig(yaml);
    const tool = config.tools[0] as Record<string, unknown>;
    expect(problems({ connections: { a: { url: 'http://x' } }, tools: [] })).toEqual([
      'connections.a.url: must start with redis://, rediss://, amqp:// or amqps://',
      '(root): must list at least one entry in tools or servers',
    ]);
    expect(problems({ ...config, tools: [{ ...tool, queue: { name: 'a:b', connection: 'legacy' } }] })).toEqual([
      'tools[0].queue.name: must be 1-200 characters without ":" or spaces',
    ]);
    expect(
      problems({
        ...config,
        tools: [tool, { ...tool, queue: { name: 'q', connection: 'x' }, job: { name: 'j', options: { jobId: 'a' } } }],
      }),
    ).toEqual([
      'tools[1].name: duplicate tool name "render_report"',
      'tools[1].queue.connection: unknown connection "x"',
      'tools[1].job.options.jobId: set by the bridge (job id = task id), remove it',
    ]);
    expect(problems({ ...config, extra: 1 })).toEqual(['(root): Unrecognized key: "extra"']);
    expect(
      problems({
        ...config,
        connections: {
          legacy: { url: 'amqp://127.0.0.1', replyQueue: 'r' },
          other: { url: 'redis://x', replyQueue: 'r' },
        },
      }),
    ).toEqual([
      'connections.other.replyQueue: only an amqp:// or amqps:// connection has a reply queue',
      'tools[0].queue.connection: "legacy" is AMQP; a BullMQ queue lives in Redis',
    ]);
  });

  it("takes a tool's inlineWaitMs (absent: TASKGATE_INLINE_WAIT_MS) and names a bad one", () => {
    const config = loadBridgeConfig(yaml);
    const tool = config.tools[0] as Record<string, unknown>;
    expect(config.tools[0]?.inlineWaitMs).toBeUndefined();
    expect(parseBridgeConfig({ ...config, tools: [{ ...tool, inlineWaitMs: 1000 }] }).tools[0]?.inlineWaitMs).toBe(
      1000,
    );
    expect(problems({ ...config, tools: [{ ...tool, inlineWaitMs: -1 }] })).toEqual([
      'tools[0].inlineWaitMs: Too small: expected number to be >=0',
    ]);
  });

  it("takes a tool's allow list (principal globs) and names the path of an empty one", () => {
    const config = loadBridgeConfig(yaml);
    const tool = config.tools[0] as Record<string, unknown>;
    expect(loadBridgeConfig(`${yaml}    allow: ["team-a/*", alice]\n`).tools[0]?.allow).toEqual(['team-a/*', 'alice']);
    expect(config.tools[0]?.allow).toBeUndefined();
    expect(problems({ ...config, tools: [{ ...tool, allow: [] }] })).toEqual([
      'tools[0].allow: must list at least one principal (or leave allow out)',
    ]);
    expect(problems({ ...config, tools: [{ ...tool, allow: ['ok', ''] }] })).toEqual([
      'tools[0].allow[1]: Too small: expected string to have >=1 characters',
    ]);
  });
});

describe('bridge mapping', () => {
  const tool = loadBridgeConfig(yaml).tools[0];
  if (tool === undefined || !isQueueTool(tool)) throw new Error('no BullMQ tool');

  it('fills the job data from "$.path" strings of the arguments', () => {
    const args = { n: 2, who: { name: 'ada' } };
    expect(jobData(tool, args)).toEqual({ count: 2, owner: 'ada', all: args, fixed: [1, 2], kind: 'report' });
    expect(jobData({ ...tool, job: { ...tool.job, data: 'arguments' } }, args)).toBe(args);
  });

  it('maps return values per `result` and failures to tool errors', () => {
    expect(completedResult(tool, { pages: 2 })).toEqual({
      content: [{ type: 'text', text: '{"pages":2}' }],
      structuredContent: { pages: 2 },
    });
    expect(completedResult(tool, 'done')).toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect(completedResult({ ...tool, result: 'json' }, 'done')).toEqual({
      content: [{ type: 'text', text: '"done"' }],
    });
    const plain = { ...tool, outputSchema: undefined, result: 'text' as const };
    expect(completedResult(plain, { a: 1 })).toEqual({ content: [{ type: 'text', text: '{"a":1}' }] });
    expect(completedResult(plain, undefined)).toEqual({ content: [{ type: 'text', text: 'null' }] });
    expect(failedResult('boom')).toEqual({ content: [{ type: 'text', text: 'boom' }], isError: true });
  });

  it('reads BullMQ progress as a number or {current, total, message}', () => {
    expect(progressOf(40)).toEqual({ progress: 40 });
    expect(progressOf({ current: 1, total: 4, message: 'one' })).toEqual({ progress: 1, total: 4, message: 'one' });
    expect(progressOf({ percent: 3 })).toBeUndefined();
    expect(progressOf('half')).toBeUndefined();
  });
});
