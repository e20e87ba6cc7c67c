/**
 * The fuzzed deployment's worker process: the test tools (sleep, echo, report, chatty, fail, crash) from
 * REDIS_URL and TASKGATE_KEY_PREFIX; prints `worker ready` once it takes jobs and drains on SIGTERM.
 */
import { TEST_TOOLS } from '@taskgate/test-harness/tools';
import { createWorker } from '@taskgate/worker';

const { REDIS_URL: redisUrl, TASKGATE_KEY_PREFIX: prefix } = process.env;
if (redisUrl === undefined) throw new Error('REDIS_URL is required');
const worker = createWorker({ redis: redisUrl, ...(prefix !== undefined && { prefix }), tools: TEST_TOOLS });
await worker.ready;
process.stdout.write('worker ready\n');
process.once('SIGTERM', () => {
  worker.close({ deadlineMs: 1000 }).then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
