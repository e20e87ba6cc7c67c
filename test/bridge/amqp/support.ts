import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ForkedProcess } from '@taskgate/test-harness';
import { waitForOutput } from '../../gateway/fixtures/processes.js';
import { spawnPython } from '../python-processes.js';

const here = fileURLToPath(new URL('.', import.meta.url));

const object = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
});

/** An `amqp:` tool of these tests, on the `rabbit` connection, to the service's `rpc_queue` unless told. */
const tool = (name: string, inputSchema: unknown, amqp: Record<string, unknown> = {}) => ({
  name,
  description: `Calls the request/reply service (${name}).`,
  inputSchema,
  amqp: { connection: 'rabbit', routingKey: 'rpc_queue', ...amqp },
});

/** The bridge config of the AMQP tests: the tools of test/bridge/amqp/rpc_server.py on one RabbitMQ node. */
export function amqpConfig(url: string): Record<string, unknown> {
  const work = object({ op: { type: 'string' }, s: { type: 'number' }, why: { type: 'string' } }, ['op']);
  return {
    connections: { rabbit: { url } },
    tools: [
      tool('fib', object({ n: { type: 'integer' } }, ['n']), { body: '$.n', headers: { 'x-source': 'taskgate' } }),
      tool('work', work, { error: '$.error', cancel: { routingKey: 'rpc_cancel', body: { id: '$.taskId' } } }),
      tool('quick', work, { timeoutMs: 1500 }),
      tool('upper', object({ text: { type: 'string' } }, ['text']), { body: '$.text', contentType: 'text/plain' }),
      tool('nowhere', object({}, []), { routingKey: 'no_such_queue' }),
      tool('lost', object({}, []), { exchange: 'no.such.exchange' }),
    ],
  };
}

/** The request/reply service (pika, RabbitMQ's RPC tutorial), on `rpc_queue`; resolves once it consumes. */
export async function startRpcServer(venv: string, url: string): Promise<ForkedProcess> {
  const proc = spawnPython(venv, ['rpc_server.py', url, 'rpc_queue', 'rpc_cancel'], here);
  await waitForOutput(proc, /awaiting RPC requests/, 60_000);
  await waitForOutput(proc, /awaiting cancel messages/, 60_000);
  return proc;
}

/** The requests of `taskId` the service took, first deliveries only (a redelivery after a broker restart is not a publish). */
export const published = (services: readonly ForkedProcess[], taskId: string): number =>
  services.reduce(
    (sum, proc) => sum + (proc.output().match(new RegExp(`request ${taskId} redelivered=False`, 'g'))?.length ?? 0),
    0,
  );

/** Every request line the service logged for `taskId`. */
export const requestLines = (services: readonly ForkedProcess[], taskId: string): string[] =>
  services.flatMap((proc) => proc.output().match(new RegExp(`request ${taskId} [^\\n]*`, 'g')) ?? []);

export const serviceDir = join(here);
