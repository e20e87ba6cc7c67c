import { describe, expect, it } from 'vitest';
import { visibleTo } from '../src/index.js';

describe('visibleTo', () => {
  it('shows an entry without allow to everyone, auth off included', () => {
    expect(visibleTo({}, 'alice')).toBe(true);
    expect(visibleTo({}, undefined)).toBe(true);
  });

  it('matches principals against globs: * any run (slashes too), ? one character, the rest literal', () => {
    const entry = { allow: ['team-a/*', 'alice', 'svc-?'] };
    expect(visibleTo(entry, 'team-a/bob')).toBe(true);
    expect(visibleTo(entry, 'team-a/ops/carol')).toBe(true);
    expect(visibleTo(entry, 'alice')).toBe(true);
    expect(visibleTo(entry, 'svc-1')).toBe(true);
    expect(visibleTo(entry, 'svc-12')).toBe(false);
    expect(visibleTo(entry, 'team-a')).toBe(false);
    expect(visibleTo(entry, 'team-b/bob')).toBe(false);
    expect(visibleTo(entry, 'alice2')).toBe(false);
    expect(visibleTo({ allow: ['a.b'] }, 'axb')).toBe(false);
    expect(visibleTo({ allow: ['(x)+'] }, '(x)+')).toBe(true);
  });

  it('hides an entry with allow from a caller without a principal (auth off), even from the glob *', () => {
    expect(visibleTo({ allow: ['*'] }, undefined)).toBe(false);
    expect(visibleTo({ allow: ['*'] }, 'anyone')).toBe(true);
  });
});
