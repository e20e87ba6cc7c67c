import type { z } from 'zod';

const MAX_ISSUES = 3;

/**
 * One line naming where each problem is and what was expected, e.g. `params.task.ttl: Invalid input:
 * expected number, received string`. Only the first few issues are listed to keep error messages short.
 */
export function describeIssues(error: z.ZodError, root = ''): string {
  const parts = error.issues.slice(0, MAX_ISSUES).map((issue) => {
    const path = [root, ...issue.path.map(String)].filter((part) => part !== '').join('.');
    return path === '' ? issue.message : `${path}: ${issue.message}`;
  });
  const more = error.issues.length - MAX_ISSUES;
  return more > 0 ? `${parts.join('; ')}; and ${more} more` : parts.join('; ');
}
