import { z } from 'zod';

/** AMQP short strings (exchange names, routing keys) are at most 255 bytes. */
const SHORT = z.string().max(255, 'must be at most 255 characters');

/** A "$.path" of the reply (or "$": all of it). */
const REPLY_PATH = /^\$(\.[^.\s]+)*$/;

/** Static header values: what an AMQP field table carries without surprises. */
const HeaderValue = z.union([z.string(), z.number(), z.boolean()]);

/**
 * The `amqp:` of a bridged tool: a request/reply service behind RabbitMQ (its RPC pattern). Each call publishes
 * one persistent request (`correlation_id` = the task id, `reply_to` = the connection's durable reply queue) to
 * `exchange` with `routingKey`; the reply finishes the task.
 */
export const AmqpSchema = z.strictObject({
  connection: z.string().min(1),
  /** The exchange the request goes to; "" is the default exchange (the routing key names the queue). */
  exchange: SHORT.default(''),
  routingKey: SHORT.min(1, 'must name where requests go (the queue, on the default exchange)'),
  /** What is sent, picked from the arguments: "$" (all of them), "$.path", or a mapping of such paths. */
  body: z.unknown().default('$'),
  /** application/json sends the body as JSON; text/plain sends a string as it is (anything else as JSON). */
  contentType: z.enum(['application/json', 'text/plain']).default('application/json'),
  headers: z.record(z.string().min(1), HeaderValue).optional(),
  /** No reply by then (from the first publish): the task fails with a message naming the routing key. */
  timeoutMs: z.number().int().positive().optional(),
  /** A JSON reply with a value at this path is a tool error with its text. */
  error: z.string().regex(REPLY_PATH, 'must be a path of the reply such as $.error').optional(),
  /** Sent on tasks/cancel; here "$" is { taskId, arguments }. */
  cancel: z
    .strictObject({
      exchange: SHORT.optional(),
      routingKey: SHORT.min(1, 'must name where cancel messages go'),
      body: z.unknown().default('$'),
    })
    .optional(),
});

export type AmqpOptions = z.output<typeof AmqpSchema>;

/** What the schema cannot see: the connection must exist and be an AMQP one; each problem names its path. */
export function amqpProblems(
  amqp: AmqpOptions,
  path: string,
  connections: Readonly<Record<string, { readonly url: string }>>,
): string[] {
  const connection = connections[amqp.connection];
  if (connection === undefined) return [`${path}.connection: unknown connection "${amqp.connection}"`];
  if (!/^amqps?:\/\//.test(connection.url)) {
    return [
      `${path}.connection: "${amqp.connection}" is not an AMQP connection (its url must start with amqp:// or amqps://)`,
    ];
  }
  return [];
}
