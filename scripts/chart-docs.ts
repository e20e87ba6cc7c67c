/**
 * Writes the chart's values.schema.json and the value table of its README from helm/taskgate/values.yaml
 * (and the settings declarations); test/deploy/chart-docs.test.ts fails when either is out of date.
 * Run: node --conditions=taskgate-source --import tsx scripts/chart-docs.ts
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CHART_DIR, valuesSchema, valuesTable } from './lib/chart-values.js';

export const TABLE_START = '<!-- values-table:start (scripts/chart-docs.ts) -->';
export const TABLE_END = '<!-- values-table:end -->';

/** The README text with its value table replaced by a fresh one. */
export function withTable(readme: string, table = valuesTable()): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`helm/taskgate/README.md needs the markers ${TABLE_START} and ${TABLE_END}`);
  return `${readme.slice(0, start + TABLE_START.length)}\n${table}\n${readme.slice(end)}`;
}

/** The schema file's text. */
export function schemaText(): string {
  return `${JSON.stringify(valuesSchema(), null, 2)}\n`;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/^.*scripts\//, 'scripts/'))) {
  const schemaFile = fileURLToPath(new URL('values.schema.json', CHART_DIR));
  writeFileSync(schemaFile, schemaText());
  // The file is checked by the project's formatter (`npx biome check .`): written in its layout.
  execFileSync(
    fileURLToPath(new URL('../node_modules/.bin/biome', import.meta.url)),
    ['format', '--write', schemaFile],
    {
      stdio: 'ignore',
    },
  );
  const readme = new URL('README.md', CHART_DIR);
  writeFileSync(readme, withTable(readFileSync(readme, 'utf8')));
}
