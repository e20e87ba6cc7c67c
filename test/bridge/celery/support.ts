import type { ForkedProcess } from '@taskgate/test-harness';

const object = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
});

/**
 * The bridge config of the Celery tests: the broker (the `py` connection: a database of the Celery Redis, or
 * RabbitMQ) and the result backend (another database, or `rpc`: Celery's rpc:// backend on RabbitMQ); each
 * tool runs a task of test/bridge/celery/tasks.py.
 */
export function celeryConfig(brokerUrl: string, backend: string): Record<string, unknown> {
  const rpc = backend === 'rpc';
  const tool = (name: string, task: string, inputSchema: unknown, celery: Record<string, unknown> = {}) => ({
    name,
    description: `Runs the Celery task ${task}.`,
    inputSchema,
    celery: { task, connection: 'py', resultBackend: rpc ? 'rpc' : 'results', ...celery },
  });
  return {
    connections: { py: { url: brokerUrl }, ...(!rpc && { results: { url: backend } }) },
    tools: [
      {
        ...tool(
          'render_pdf',
          'reports.render_pdf',
          object({ path: { type: 'string' }, dpi: { type: 'integer' } }, ['path']),
          { args: ['$.path'], kwargs: { dpi: '$.dpi' }, options: { priority: 5, timeLimitS: 60, expiresMs: 600_000 } },
        ),
        outputSchema: object({ pages: { type: 'integer' } }, ['pages']),
      },
      tool(
        'paginate',
        'reports.paginate',
        object({ pages: { type: 'integer' }, step_ms: { type: 'integer' } }, ['pages']),
      ),
      tool('explode', 'reports.explode', object({ reason: { type: 'string' } }, ['reason'])),
      tool(
        'flaky',
        'reports.flaky',
        object({ fail_times: { type: 'integer' }, countdown_s: { type: 'number' } }, ['fail_times']),
      ),
      tool('sleepy', 'reports.sleepy', object({ seconds: { type: 'number' } }, ['seconds']), { cancel: 'terminate' }),
      { ...tool('greet', 'reports.render_pdf', object({ path: { type: 'string' } }, ['path'])), result: 'json' },
    ],
  };
}

/** How many times the Celery worker ran the task (tasks.py logs `ran <id>` as each run starts). */
export const runs = (worker: ForkedProcess, taskId: string): number =>
  // Task ids are base64url: one may end in '-', after which `\b` would not match.
  worker.output().match(new RegExp(`ran ${taskId}(?=\\s)`, 'g'))?.length ?? 0;
