import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createGateway, type Gateway } from '@taskgate/gateway';
import { connectClient, uniquePrefix, useRedis } from '@taskgate/test-harness';
import { TEST_TOOLS } from '@taskgate/test-harness/tools';
import { createWorker, type TaskgateWorker } from '@taskgate/worker';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ADMIN_TOKEN = 'console-test-admin-token-0123';
const USER_TOKEN = 'console-test-user-token-0123';
/** Each step waits on a real browser, gateway and worker: bounded, with room for a busy machine. */
const STEP_MS = 60_000;
/** Screenshots go to the ignored test output folder. */
const OUTPUT = fileURLToPath(new URL('../../test-results/console/', import.meta.url));

/** Debian's chromium (installed by scripts/lib/ensure-deps.sh), or CHROMIUM_BIN. */
function chromiumPath(): string {
  const name = process.env.CHROMIUM_BIN ?? 'chromium';
  return execFileSync('sh', ['-c', `command -v "${name}"`], { encoding: 'utf8' }).trim();
}

describe('operator console in headless Chromium', () => {
  const redis = useRedis();
  let gateway: Gateway;
  let worker: TaskgateWorker;
  let browser: Browser;
  let page: Page;
  let mcpUrl: string;
  let adminUrl: string;

  // One deployment for the whole file: the page stays signed in from one step to the next.
  const prefix = uniquePrefix('console');

  beforeAll(async () => {
    mkdirSync(OUTPUT, { recursive: true });
    gateway = createGateway({
      redis: redis.url,
      keyPrefix: prefix,
      cursorSecret: 'console-test-cursor-secret-0123456789',
      auth: { mode: 'tokens', tokens: { [USER_TOKEN]: 'ada' } },
      adminToken: ADMIN_TOKEN,
    });
    mcpUrl = (await gateway.listen(0)).url;
    adminUrl = (await gateway.listenAdmin(0)).url;
    worker = createWorker({ redis: redis.url, prefix, tools: TEST_TOOLS, statusCheckMs: 500 });
    await worker.ready;
    browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.close({ deadlineMs: 500 });
    await gateway?.close();
  });

  async function createTask(name: string, args: Record<string, unknown>): Promise<string> {
    const { client } = await connectClient(mcpUrl, { token: USER_TOKEN });
    const created = await client.request(
      { method: 'tools/call', params: { name, arguments: args, task: {} } },
      CreateTaskResultSchema,
    );
    return created.task.taskId;
  }

  it(
    'signs in with the admin token; a wrong token is refused',
    async () => {
      await page.goto(adminUrl);
      await page.fill('#token', 'not-the-admin-token-000000');
      await page.click('#sign-in');
      await page.waitForSelector('text=That token is not the admin token.');
      await page.fill('#token', ADMIN_TOKEN);
      await page.screenshot({ path: join(OUTPUT, 'sign-in.png') });
      await page.click('#sign-in');
      await page.waitForSelector('#tasks');
      await page.waitForSelector('#live.on', { timeout: 10_000 });
      // The page keeps the token in sessionStorage (evaluated in the browser, where `globalThis` has it).
      const stored = await page.evaluate(() =>
        (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem(
          'taskgate.adminToken',
        ),
      );
      expect(stored).toBe(ADMIN_TOKEN);
      expect(page.url()).not.toContain(ADMIN_TOKEN);
    },
    STEP_MS,
  );

  it(
    'shows a task created through MCP and updates it live when it completes',
    async () => {
      // Long enough to be seen working first (the table is re-read every 5 s; the completion arrives over SSE).
      const taskId = await createTask('sleep', { ms: 8000 });
      const row = `tr[data-task="${taskId}"]`;
      await page.waitForSelector(`${row}[data-status="working"]`, { timeout: 10_000 });
      await page.waitForSelector(`${row}[data-status="completed"]`, { timeout: 15_000 });
      await page.click(`${row} button.link`);
      await page.waitForSelector('#timeline li[data-event="finished"]', { timeout: 10_000 });
      const events = await page.$$eval('#timeline li', (items) => items.map((item) => item.getAttribute('data-event')));
      expect(events).toEqual(['created', 'started', 'finished']);
      expect(await page.textContent('#workers')).toContain('sleep');
      await page.screenshot({ path: join(OUTPUT, 'console.png') });
    },
    STEP_MS,
  );

  it(
    'cancels a running task with its Cancel button',
    async () => {
      const taskId = await createTask('report', { pages: 60, msPerPage: 500 });
      const row = `tr[data-task="${taskId}"]`;
      await page.waitForSelector(`${row}[data-status="working"]`, { timeout: 10_000 });
      await page.click(`${row} button.cancel`);
      await page.waitForSelector(`${row}[data-status="cancelled"]`, { timeout: 10_000 });
      const { client } = await connectClient(mcpUrl, { token: USER_TOKEN });
      expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({
        status: 'cancelled',
        statusMessage: 'The task was cancelled by an operator.',
      });
      await page.screenshot({ path: join(OUTPUT, 'cancelled.png') });
    },
    STEP_MS,
  );

  it(
    "opens BullMQ's raw queues (bull-board) from the signed-in page, behind the admin token",
    async () => {
      const [raw] = await Promise.all([page.context().waitForEvent('page'), page.click('text=Raw queues')]);
      await raw.waitForLoadState();
      expect(new URL(raw.url()).pathname).toBe('/admin/queues/');
      await raw.waitForSelector('text=tool.sleep', { timeout: 15_000 });
      await raw.screenshot({ path: join(OUTPUT, 'raw-queues.png') });
      await raw.close();
      const anonymous = await fetch(new URL('/admin/queues/', adminUrl));
      expect(anonymous.status).toBe(401);
    },
    STEP_MS,
  );
});
