/**
 * The reference pages' generated tables: settings (packages/cli/src/settings*.ts), error codes
 * (packages/protocol/src/error-catalogue.ts) and chart values (helm/taskgate/values.yaml). Each page holds its
 * table between two markers; scripts/doc-tables.ts rewrites them, test/docs/reference-tables.test.ts fails
 * when a page differs from a fresh table.
 */
import { SETTINGS } from '@taskgate/cli';
import { ERROR_CATALOGUE } from '@taskgate/protocol';
import { valuesTable } from './chart-values.js';

/** A generated table's page (relative to the repository root) and how to build the table. */
export interface GeneratedTable {
  readonly page: string;
  readonly name: string;
  readonly table: () => string;
}

const usedBy = (scope: string): string => (scope === 'both' ? 'gateway, worker' : scope);
const documented = (setting: (typeof SETTINGS)[number]): string =>
  'default' in setting ? (setting.default === '' ? '(empty)' : `\`${setting.default}\``) : '—';

/** Every setting: variable, flag, scope, default, meaning. */
export function settingsTable(): string {
  const rows = SETTINGS.map(
    (setting) =>
      `| \`${setting.env}\` | \`${setting.flag}\` | ${usedBy(setting.scope)} | ${documented(setting)} | ${setting.description} |`,
  );
  return ['| variable | flag | used by | default | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** Every error code of the catalogue: code, name, origin, HTTP statuses, meaning. */
export function errorTable(): string {
  const rows = ERROR_CATALOGUE.map(
    (entry) => `| ${entry.code} | \`${entry.name}\` | ${entry.origin} | ${entry.http.join(', ')} | ${entry.meaning} |`,
  );
  return ['| code | name | defined by | HTTP | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

export const GENERATED_TABLES: readonly GeneratedTable[] = [
  { page: 'docs/reference/settings.md', name: 'settings', table: settingsTable },
  { page: 'docs/reference/errors.md', name: 'errors', table: errorTable },
  { page: 'docs/reference/chart-values.md', name: 'chart-values', table: valuesTable },
];

const start = (name: string): string => `<!-- generated:${name}:start (scripts/doc-tables.ts) -->`;
const end = (name: string): string => `<!-- generated:${name}:end -->`;

/** The page's text with the table between its markers replaced by `table`. */
export function withGeneratedTable(page: string, text: string, name: string, table: string): string {
  const from = text.indexOf(start(name));
  const to = text.indexOf(end(name));
  if (from < 0 || to < from) throw new Error(`${page} needs the markers ${start(name)} and ${end(name)}`);
  return `${text.slice(0, from + start(name).length)}\n${table}\n${text.slice(to)}`;
}
