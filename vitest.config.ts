import { defineConfig } from 'vitest/config';
import { sharedTestConfig } from './vitest.shared.js';

export default defineConfig({
  test: {
    ...sharedTestConfig.test,
    projects: ['packages/*/vitest.config.ts', 'test/vitest.config.ts'],
  },
});
