import { defineProject } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.js';

export default defineProject({
  ...sharedTestConfig,
  test: { ...sharedTestConfig.test, name: 'conformance-fixture', include: ['test/**/*.test.ts'] },
});
