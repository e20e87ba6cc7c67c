import { z } from 'zod';

/** Celery queue names become Redis list names or AMQP queue names: no whitespace. */
const QUEUE_NAME = /^\S{1,200}$/;

/** `resultBackend: rpc`: Celery's `rpc://` result backend, its states sent as messages on the AMQP broker. */
export const RPC_BACKEND = 'rpc';
/** The durable queue the bridges share for the states Celery's `rpc://` backend sends them. */
export const DEFAULT_RESULT_QUEUE = 'taskgate.celery.results';

/** Is this connection url an AMQP broker (RabbitMQ), rather than Redis? */
export const isAmqpUrl = (url: string): boolean => /^amqps?:\/\//.test(url);

/** The tool arguments as the kwargs, or a mapping whose "$.path" strings pick from them. */
const KwargsSchema = z.union([z.literal('arguments'), z.record(z.string(), z.unknown())]);

/**
 * The `celery:` of a bridged tool: which Celery task a call sends, where, with which arguments and options,
 * and what `tasks/cancel` does to a task a worker holds.
 */
export const CelerySchema = z.strictObject({
  task: z.string().trim().min(1, 'must be the Celery task name'),
  connection: z.string().min(1),
  /** The Redis result backend, or `rpc` (Celery's `rpc://` backend, AMQP brokers); the broker's by default. */
  resultBackend: z.string().min(1).optional(),
  queue: z.string().regex(QUEUE_NAME, 'must be 1-200 characters without spaces').default('celery'),
  /** AMQP: the arguments the Celery queue is declared with when the bridge declares it first (x-max-priority). */
  queueArguments: z.record(z.string(), z.unknown()).optional(),
  /** `resultBackend: rpc`: the bridges' shared durable queue for the states (default taskgate.celery.results). */
  resultQueue: z.string().regex(QUEUE_NAME, 'must be 1-200 characters without spaces').optional(),
  /** Positional arguments picked from the tool arguments. */
  args: z.array(z.unknown()).optional(),
  /** Keyword arguments: the tool arguments (the default without `args`) or a mapping (none with `args`). */
  kwargs: KwargsSchema.optional(),
  options: z
    .strictObject({
      priority: z.number().int().min(0).max(9).optional(),
      timeLimitS: z.number().positive().optional(),
      softTimeLimitS: z.number().positive().optional(),
      expiresMs: z.number().int().positive().optional(),
    })
    .default({}),
  cancel: z.enum(['revoke', 'terminate']).default('revoke'),
});

export type CeleryOptions = z.output<typeof CelerySchema>;

/** What the schema cannot see: connections that must exist and fit, and limits that must agree; each names its path. */
export function celeryProblems(
  celery: CeleryOptions,
  path: string,
  connections: Readonly<Record<string, { readonly url: string } | undefined>>,
): string[] {
  const problems: string[] = [];
  const broker = connections[celery.connection];
  if (broker === undefined) {
    problems.push(`${path}.connection: unknown connection "${celery.connection}"`);
  }
  const amqp = broker !== undefined && isAmqpUrl(broker.url);
  if (celery.resultBackend === RPC_BACKEND) {
    if (broker !== undefined && !amqp) {
      problems.push(`${path}.resultBackend: rpc needs an AMQP broker (a connection url amqp:// or amqps://)`);
    }
  } else if (celery.resultBackend !== undefined) {
    const backend = connections[celery.resultBackend];
    if (backend === undefined) problems.push(`${path}.resultBackend: unknown connection "${celery.resultBackend}"`);
    else if (isAmqpUrl(backend.url)) {
      problems.push(`${path}.resultBackend: must be a Redis connection or rpc, not the AMQP "${celery.resultBackend}"`);
    }
  } else if (amqp) {
    problems.push(`${path}.resultBackend: required with an AMQP broker: a Redis connection or rpc`);
  }
  if (celery.resultQueue !== undefined && celery.resultBackend !== RPC_BACKEND) {
    problems.push(`${path}.resultQueue: only with resultBackend: rpc`);
  }
  if (celery.queueArguments !== undefined && broker !== undefined && !amqp) {
    problems.push(`${path}.queueArguments: only with an AMQP broker`);
  }
  const { timeLimitS, softTimeLimitS } = celery.options;
  if (timeLimitS !== undefined && softTimeLimitS !== undefined && softTimeLimitS > timeLimitS) {
    problems.push(`${path}.options.softTimeLimitS: must not exceed timeLimitS (${timeLimitS})`);
  }
  return problems;
}
