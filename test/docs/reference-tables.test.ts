import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_TABLES, withGeneratedTable } from '../../scripts/lib/doc-tables.js';

const root = new URL('../../', import.meta.url);

// To rewrite the tables: node --conditions=taskgate-source --import tsx scripts/doc-tables.ts
describe('the reference pages generated from code', () => {
  it.each(GENERATED_TABLES.map((entry) => [entry.page, entry] as const))('%s equals a fresh table', (page, entry) => {
    const text = readFileSync(new URL(page, root), 'utf8');
    expect(text).toBe(withGeneratedTable(page, text, entry.name, entry.table()));
  });

  it('the settings table has a row per setting, the error table a row per code', async () => {
    const { SETTINGS } = await import('@taskgate/cli');
    const { ERROR_CATALOGUE } = await import('@taskgate/protocol');
    const settings = readFileSync(new URL('docs/reference/settings.md', root), 'utf8');
    for (const setting of SETTINGS) expect(settings).toContain(`| \`${setting.env}\` | \`${setting.flag}\` |`);
    const errors = readFileSync(new URL('docs/reference/errors.md', root), 'utf8');
    for (const entry of ERROR_CATALOGUE) expect(errors).toContain(`| ${entry.code} | \`${entry.name}\` |`);
  });

  it('a page without its markers is refused with the markers named', () => {
    expect(() => withGeneratedTable('x.md', '# x\n', 'settings', '| a |')).toThrow(
      'x.md needs the markers <!-- generated:settings:start (scripts/doc-tables.ts) --> and <!-- generated:settings:end -->',
    );
  });
});
