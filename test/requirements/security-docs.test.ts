import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const page = readFileSync(new URL('../../docs/operate/security.md', import.meta.url), 'utf8');

/** The section of the security page under a `## title` heading, up to the next one. */
function section(title: string): string {
  const start = page.indexOf(`## ${title}\n`);
  if (start < 0) return '';
  const end = page.indexOf('\n## ', start + 3);
  return page.slice(start, end < 0 ? undefined : end).replace(/\s+/g, ' ');
}

describe('security documentation', () => {
  it('[SEC-2] documents how unbound tasks are protected: random ids, session binding, and the limitation', () => {
    const notes = section('Security notes');
    expect(notes).not.toBe('');
    // The ids: cryptographically secure, with their entropy.
    expect(notes).toMatch(/Task ids carry 144 random bits from the operating system's CSPRNG/);
    // Without authentication the session stands in for the principal, and that is the limitation to know.
    expect(notes).toMatch(/with authentication off — the MCP session that created it/i);
    expect(notes).toMatch(/With authentication off, a task id and the session id are what protect a task/);
    expect(notes).toMatch(/keep the gateway on loopback .* or turn authentication on/);
  });
});
