import type { ViteUserConfig } from 'vitest/config';

/** Settings every test project shares. */
export const sharedTestConfig = {
  // Workspace packages resolve to their sources (the `taskgate-source` export condition), so tests never
  // depend on a stale `dist/`; forked processes get the same through SOURCE_EXEC_ARGV of the harness.
  resolve: { conditions: ['taskgate-source'] },
  ssr: { resolve: { conditions: ['taskgate-source'], externalConditions: ['taskgate-source'] } },
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Shared, noisy 2-core machines: parallel across files, but modestly.
    maxWorkers: 2,
  },
} satisfies ViteUserConfig;
