/**
 * Prints the README's configuration table from the settings declarations (packages/cli/src/settings.ts).
 * Run: node --conditions=taskgate-source --import tsx scripts/config-table.ts
 */
import { SETTINGS } from '@taskgate/cli';

const usedBy = (scope: string): string => (scope === 'both' ? 'gateway, worker' : scope);
const documented = (setting: (typeof SETTINGS)[number]): string =>
  'default' in setting ? (setting.default === '' ? '(empty)' : `\`${setting.default}\``) : '—';
const rows = SETTINGS.map(
  (setting) =>
    `| \`${setting.env}\` | \`${setting.flag}\` | ${usedBy(setting.scope)} | ${documented(setting)} | ${setting.description} |`,
);
process.stdout.write(
  `${['| variable | flag | used by | default | meaning |', '|---|---|---|---|---|', ...rows].join('\n')}\n`,
);
