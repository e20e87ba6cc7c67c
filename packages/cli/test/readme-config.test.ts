import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../src/settings.js';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

/** The rows of the first table under `## Configuration`, as cells without backticks. */
function configurationTable(): Map<string, { flag: string; usedBy: string; default: string; meaning: string }> {
  const section = readme.split(/^## /m).find((part) => part.startsWith('Configuration\n'));
  if (section === undefined) throw new Error('README.md has no "## Configuration" section');
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
  const table = new Map<string, { flag: string; usedBy: string; default: string; meaning: string }>();
  for (const [env, flag, usedBy, defaultValue, meaning] of rows) {
    const bare = (cell = '') => cell.replace(/^`|`$/g, '');
    table.set(bare(env), {
      flag: bare(flag),
      usedBy: usedBy ?? '',
      default: bare(defaultValue),
      meaning: meaning ?? '',
    });
  }
  return table;
}

// To regenerate the table: node --conditions=taskgate-source --import tsx scripts/config-table.ts
describe("the README's configuration table", () => {
  it('lists every setting with its flag, scope and default, and nothing else', () => {
    const table = configurationTable();
    expect([...table.keys()].sort()).toEqual(SETTINGS.map((setting) => setting.env).sort());
    for (const setting of SETTINGS) {
      const row = table.get(setting.env);
      const documented = 'default' in setting ? (setting.default === '' ? '(empty)' : setting.default) : '—';
      expect({ env: setting.env, ...row }).toEqual({
        env: setting.env,
        flag: setting.flag,
        usedBy: setting.scope === 'both' ? 'gateway, worker' : setting.scope,
        default: documented,
        meaning: setting.description,
      });
    }
  });
});
