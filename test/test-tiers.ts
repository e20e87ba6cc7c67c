/**
 * What each test needs, for `npm run test:fast` (vitest.fast.config.ts): the test files listed here need nothing —
 * no redis-server, no other process, no browser — and run in well under a minute. Every other test needs Redis
 * (the harness starts a private redis-server) or processes (forked gateways and workers, a Redis Cluster,
 * HAProxy, Chromium, helm). test/architecture/test-tiers.test.ts checks this list against the files' imports
 * both ways: a listed file that starts something fails it, and so does a file that needs nothing but is missing.
 */
export const FAST_TESTS: readonly string[] = [
  'packages/bridge/test/amqp-config.test.ts',
  'packages/bridge/test/celery-config.test.ts',
  'packages/bridge/test/config.test.ts',
  'packages/bridge/test/queue-shards.test.ts',
  'packages/bridge/test/servers-config.test.ts',
  'packages/bridge/test/upstream-catalog.test.ts',
  'packages/cli/test/config.test.ts',
  'packages/cli/test/defaults.test.ts',
  'packages/cli/test/redis-settings.test.ts',
  'packages/cli/test/tasks-output.test.ts',
  'packages/cli/test/telemetry.test.ts',
  'packages/conformance-fixture/test/fixture.test.ts',
  'packages/core/test/allow-list.test.ts',
  'packages/core/test/entry-ids.test.ts',
  'packages/core/test/errors.test.ts',
  'packages/core/test/queue-shards.test.ts',
  'packages/core/test/uri-template.test.ts',
  'packages/dev-redis/test/free-port.test.ts',
  'packages/gateway/test/http-error.test.ts',
  'packages/gateway/test/json-depth.test.ts',
  'packages/gateway/test/lazy-logger.test.ts',
  'packages/gateway/test/options.test.ts',
  'packages/gateway/test/quiet-id.test.ts',
  'packages/gateway/test/read-body.test.ts',
  'packages/gateway/test/wire/rev2025-11-25-codec.test.ts',
  'packages/gateway/test/wire/rev2026-07-28-codec.test.ts',
  'packages/protocol/test/capabilities.test.ts',
  'packages/protocol/test/error-catalogue.test.ts',
  'packages/protocol/test/methods.test.ts',
  'packages/protocol/test/oracle.test.ts',
  'packages/protocol/test/parse-json-rpc-message.test.ts',
  'packages/protocol/test/protocol-error.test.ts',
  'packages/protocol/test/protocol-version.test.ts',
  'packages/protocol/test/task.test.ts',
  'packages/worker/test/client-task-create.test.ts',
  'packages/worker/test/define-tool.test.ts',
  'packages/worker/test/offerings.test.ts',
  'packages/worker/test/outcome.test.ts',
  'packages/worker/test/read-input.test.ts',
  'test/architecture/core-surface.test.ts',
  'test/architecture/error-codes.test.ts',
  'test/architecture/imports.test.ts',
  'test/architecture/redis-ownership.test.ts',
  'test/architecture/test-tiers.test.ts',
  'test/docs/pages.test.ts',
  'test/docs/reference-tables.test.ts',
  'test/requirements/coverage.test.ts',
  'test/requirements/requirements-doc.test.ts',
  'test/requirements/security-docs.test.ts',
];

/**
 * Text in a test (or a support file it imports) that says it needs Redis, another process or a browser. (Each
 * pattern is written so that it does not match its own source.)
 */
export const NEEDS_SOMETHING: readonly RegExp[] = [
  /@taskgate\/(test-harness)/,
  /\bstart(RedisServer)\b/,
  /from '(ioredis)'/,
  /node:(child_process)/,
  /(playwright)-core/,
];
