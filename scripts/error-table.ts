/**
 * Prints the README's table of error codes from the error catalogue (packages/protocol/src/error-catalogue.ts).
 * Run: node --conditions=taskgate-source --import tsx scripts/error-table.ts
 */
import { ERROR_CATALOGUE } from '@taskgate/protocol';

const rows = ERROR_CATALOGUE.map(
  (entry) => `| ${entry.code} | \`${entry.name}\` | ${entry.origin} | ${entry.http.join(', ')} | ${entry.meaning} |`,
);
process.stdout.write(
  `${['| code | name | defined by | HTTP | meaning |', '|---|---|---|---|---|', ...rows].join('\n')}\n`,
);
