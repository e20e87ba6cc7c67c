import { z } from 'zod';

/** Celery queue names become Redis list names: no whitespace. */
const QUEUE_NAME = /^\S{1,200}$/;

/** The tool arguments as the kwargs, or a mapping whose "$.path" strings pick from them. */
const KwargsSchema = z.union([z.literal('arguments'), z.record(z.string(), z.unknown())]);

/**
 * The `celery:` of a bridged tool: which Celery task a call sends, where, with which arguments and options,
 * and what `tasks/cancel` does to a task a worker holds.
 */
export const CelerySchema = z.strictObject({
  task: z.string().trim().min(1, 'must be the Celery task name'),
  connection: z.string().min(1),
  /** The Redis result backend; the broker's connection by default. */
  resultBackend: z.string().min(1).optional(),
  queue: z.string().regex(QUEUE_NAME, 'must be 1-200 characters without spaces').default('celery'),
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

/** What the schema cannot see: connections that must exist, and limits that must agree; each names its path. */
export function celeryProblems(
  celery: CeleryOptions,
  path: string,
  connections: Readonly<Record<string, unknown>>,
): string[] {
  const problems: string[] = [];
  if (connections[celery.connection] === undefined) {
    problems.push(`${path}.connection: unknown connection "${celery.connection}"`);
  }
  if (celery.resultBackend !== undefined && connections[celery.resultBackend] === undefined) {
    problems.push(`${path}.resultBackend: unknown connection "${celery.resultBackend}"`);
  }
  const { timeLimitS, softTimeLimitS } = celery.options;
  if (timeLimitS !== undefined && softTimeLimitS !== undefined && softTimeLimitS > timeLimitS) {
    problems.push(`${path}.options.softTimeLimitS: must not exceed timeLimitS (${timeLimitS})`);
  }
  return problems;
}
