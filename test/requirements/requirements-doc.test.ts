import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REQUIREMENTS, SECTIONS } from './manifest.js';
import { REQUIREMENTS_DOC, requirementsDoc } from './requirements-doc.js';

const doc = readFileSync(new URL(`../../${REQUIREMENTS_DOC}`, import.meta.url), 'utf8');

describe('requirements document', () => {
  // To regenerate it: node --import tsx scripts/requirements-doc.ts
  it('is exactly what the manifest prints', () => {
    expect(doc).toBe(requirementsDoc());
  });

  it('puts every rule in a section, numbered from 1 without gaps, each with a rule text', () => {
    for (const section of SECTIONS) {
      const ids = REQUIREMENTS.filter((r) => r.id.startsWith(`${section.prefix}-`)).map((r) => r.id);
      expect(ids, section.prefix).toEqual(ids.map((_, index) => `${section.prefix}-${index + 1}`));
    }
    const prefixes = new Set(SECTIONS.map((section) => section.prefix));
    expect(REQUIREMENTS.filter((r) => !prefixes.has(r.id.replace(/-\d+$/, ''))).map((r) => r.id)).toEqual([]);
    expect(REQUIREMENTS.filter((r) => r.rule.trim().length < 20).map((r) => r.id)).toEqual([]);
  });
});
