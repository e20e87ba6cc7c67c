import { defineConfig } from 'vitest/config';
import { FAST_TESTS } from './test/test-tiers.js';
import { sharedTestConfig } from './vitest.shared.js';

/**
 * `npm run test:fast`: the tests that need no Redis, no process and no browser (test/test-tiers.ts). They start
 * nothing and leave no state behind, so they share module instances (no isolation): most of their time was
 * loading the same modules again in every file.
 */
export default defineConfig({
  ...sharedTestConfig,
  test: { ...sharedTestConfig.test, name: 'fast', include: [...FAST_TESTS], isolate: false },
});
