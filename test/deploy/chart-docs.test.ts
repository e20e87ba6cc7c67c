import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { schemaText, withTable } from '../../scripts/chart-docs.js';
import { valueDocs } from '../../scripts/lib/chart-values.js';
import { chartDir, repoRoot } from './support/render.js';

const run = promisify(execFile);

describe('helm/taskgate: generated files are up to date', () => {
  it('values.schema.json and the README value table match values.yaml (node ... scripts/chart-docs.ts)', () => {
    // Compared as data: biome formats the committed file.
    expect(JSON.parse(readFileSync(`${chartDir}/values.schema.json`, 'utf8'))).toEqual(JSON.parse(schemaText()));
    const readme = readFileSync(`${chartDir}/README.md`, 'utf8');
    expect(readme).toBe(withTable(readme));
  });

  it('every value has a description (a "# --" comment or its setting)', () => {
    const docs = valueDocs();
    expect(docs.length).toBeGreaterThan(100);
    for (const doc of docs) expect(doc.description || doc.setting?.description, doc.path).toBeTruthy();
    expect(() => valueDocs('undocumented: 1\n')).toThrow('values.yaml: undocumented has no "# --" comment');
  });

  it('deploy/kubernetes equals a fresh render (bash scripts/render-manifests)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskgate-manifests-'));
    try {
      await run('bash', ['scripts/render-manifests', dir], { cwd: repoRoot });
      const committed = `${repoRoot}deploy/kubernetes`;
      const files = readdirSync(dir).sort();
      expect(readdirSync(committed).sort()).toEqual(files);
      expect(files).toContain('kustomization.yaml');
      for (const file of files) {
        expect(readFileSync(join(committed, file), 'utf8'), file).toBe(readFileSync(join(dir, file), 'utf8'));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
