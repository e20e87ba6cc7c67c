import { defineProject } from 'vitest/config';
import { sharedTestConfig } from '../vitest.shared.js';

export default defineProject({
  ...sharedTestConfig,
  test: {
    ...sharedTestConfig.test,
    name: 'cross-package',
    include: ['**/*.test.ts'],
    exclude: ['harness/**', '**/node_modules/**'],
  },
});
