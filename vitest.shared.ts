import { fileURLToPath } from 'node:url';
import type { ViteUserConfig } from 'vitest/config';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/**
 * Settings every test project shares. Workspace packages resolve to their sources, so tests never
 * depend on a stale `dist/`; multi-process tests that fork Node processes use the built output instead.
 */
export const sharedTestConfig = {
  resolve: {
    alias: {
      '@taskgate/protocol': here('./packages/protocol/src/index.ts'),
      '@taskgate/core': here('./packages/core/src/index.ts'),
      '@taskgate/test-harness': here('./test/harness/src/index.ts'),
    },
  },
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Shared, noisy 2-core machines: parallel across files, but modestly.
    maxWorkers: 2,
  },
} satisfies ViteUserConfig;
