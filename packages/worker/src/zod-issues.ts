import type { z } from 'zod';

/** The first few problems of a zod error on one line, each with its path: `n: must be even; a.b: Required`. */
export function describeZodIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}
