/**
 * Writes docs/requirements/2025-11-25.md from the requirements manifest (test/requirements/manifest.ts).
 * Run: node --import tsx scripts/requirements-doc.ts
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { REQUIREMENTS_DOC, requirementsDoc } from '../test/requirements/requirements-doc.js';

writeFileSync(fileURLToPath(new URL(`../${REQUIREMENTS_DOC}`, import.meta.url)), requirementsDoc());
