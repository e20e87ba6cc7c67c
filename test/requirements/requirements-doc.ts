import { REQUIREMENTS, SECTIONS } from './manifest.js';

/** Where the rules are written out for readers, relative to the repository root. */
export const REQUIREMENTS_DOC = 'docs/requirements/2025-11-25.md';

const INTRO = [
  '# MCP Tasks (protocol revision 2025-11-25): the rules taskgate checks, by id',
  '',
  'Printed from `test/requirements/manifest.ts` by `scripts/requirements-doc.ts`; do not edit by hand',
  '(`test/requirements/requirements-doc.test.ts` fails when the two differ). Tests cite an id in brackets in their',
  'title, e.g. `[CNL-1]`, and `test/requirements/coverage.test.ts` fails when an id is cited by no test (CLT-* aside)',
  'or a test cites an id that is not listed here. Levels as in RFC 2119; a rule without a level describes the protocol.',
  '"Receiver" is the side that runs the task (for `tools/call`: the gateways and their workers), "requestor" the',
  'side that asked for it.',
];

/** The text of {@link REQUIREMENTS_DOC}: one section per id prefix, one bullet per rule, in manifest order. */
export function requirementsDoc(): string {
  const lines = [...INTRO];
  for (const section of SECTIONS) {
    const rules = REQUIREMENTS.filter((r) => r.id.startsWith(`${section.prefix}-`));
    lines.push('', `## ${section.title} (${section.prefix})`, '', `Specification: <${section.spec}>`, '');
    for (const r of rules) lines.push(`- ${r.id}${r.level === 'INFO' ? '' : ` ${r.level}`}: ${r.rule}`);
  }
  return `${lines.join('\n')}\n`;
}
