import { defineProject } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.js';

export default defineProject({
  ...sharedTestConfig,
  test: { ...sharedTestConfig.test, name: 'dev-redis', include: ['test/**/*.test.ts'] },
});
