/**
 * Writes the generated tables of the reference pages (settings, error codes, chart values) from the code.
 * Run: node --conditions=taskgate-source --import tsx scripts/doc-tables.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { GENERATED_TABLES, withGeneratedTable } from './lib/doc-tables.js';

const root = new URL('../', import.meta.url);
for (const { page, name, table } of GENERATED_TABLES) {
  const file = new URL(page, root);
  writeFileSync(file, withGeneratedTable(page, readFileSync(file, 'utf8'), name, table()));
}
