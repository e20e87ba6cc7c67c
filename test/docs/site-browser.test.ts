import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const vitepress = join(root, 'node_modules', 'vitepress', 'bin', 'vitepress.js');
const STEP_MS = 60_000;

/** Debian's chromium (installed by scripts/lib/ensure-deps.sh), or CHROMIUM_BIN. */
function chromiumPath(): string {
  const name = process.env.CHROMIUM_BIN ?? 'chromium';
  return execFileSync('sh', ['-c', `command -v "${name}"`], { encoding: 'utf8' }).trim();
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Serves a built site as a static host does with clean URLs: `/a/b` is `a/b.html`, `/a/` is `a/index.html`. */
function serveStatic(dir: string): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    const candidates = [join(dir, path), `${join(dir, path)}.html`, join(dir, path, 'index.html')];
    const file = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
    response.writeHead(file === undefined ? 404 : 200, {
      'content-type': TYPES[extname(file ?? '.html')] ?? 'application/octet-stream',
    });
    response.end(readFileSync(file ?? join(dir, '404.html')));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({
        server,
        url: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`,
      });
    });
  });
}

describe('the docs site in headless Chromium', () => {
  let outDir: string;
  let server: Server;
  let url: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'taskgate-docs-'));
    // The real build (dead links fail it), into a folder of this test's own.
    await run(process.execPath, [vitepress, 'build', 'docs', '--outDir', outDir], { cwd: root, timeout: 240_000 });
    ({ server, url } = await serveStatic(outDir));
    browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox'] });
    page = await browser.newPage();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    server?.close();
    if (outDir !== undefined) rmSync(outDir, { recursive: true, force: true });
  });

  it(
    'renders the home page',
    async () => {
      await page.goto(`${url}/`);
      await expect(page.locator('.VPHero .name').textContent()).resolves.toContain('taskgate');
      await expect(page.locator('.VPHero .text').textContent()).resolves.toContain('A broker for MCP tasks');
      await expect(page.locator('.VPFeature').count()).resolves.toBe(3);
    },
    STEP_MS,
  );

  it(
    'renders a guide page with the sidebar, and its links lead on',
    async () => {
      await page.goto(`${url}/guide/getting-started`);
      await expect(page.locator('.vp-doc h1').textContent()).resolves.toContain('Getting started');
      await expect(page.locator('.VPSidebar').textContent()).resolves.toContain('Every error code');
      await page.locator('.VPSidebar a', { hasText: 'Writing tools' }).click();
      await page.waitForURL(/\/guide\/writing-tools$/);
      // The router changes the URL before it renders the new page: wait for its heading, then read it.
      await page.locator('.vp-doc h1', { hasText: 'Writing tools' }).waitFor({ timeout: STEP_MS / 2 });
      await expect(page.locator('.vp-doc h1').textContent()).resolves.toContain('Writing tools');
    },
    STEP_MS,
  );

  it(
    "finds tasks/result with the site's local search",
    async () => {
      await page.goto(`${url}/`);
      await page.locator('.DocSearch-Button').click();
      const input = page.locator('.VPLocalSearchBox input');
      await input.fill('tasks/result');
      const results = page.locator('.VPLocalSearchBox .results li');
      await results.first().waitFor();
      expect(await results.count()).toBeGreaterThan(3);
      await results.first().click();
      await page.locator('.vp-doc h1').waitFor();
      await expect(page.locator('.vp-doc').textContent()).resolves.toContain('tasks/result');
    },
    STEP_MS,
  );
});
