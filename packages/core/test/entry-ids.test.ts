import { describe, expect, it } from 'vitest';
import { compareEntryIds } from '../src/index.js';

describe('compareEntryIds', () => {
  it('orders stream entry ids by time, then by sequence, as numbers', () => {
    const sign = (a: string, b: string): number => Math.sign(compareEntryIds(a, b));
    expect(sign('1796590194577-0', '1796590194577-0')).toBe(0);
    expect(sign('1796590194577-0', '1796590194578-0')).toBe(-1);
    expect(sign('1796590194578-0', '1796590194577-9')).toBe(1);
    expect(sign('1-10', '1-9')).toBe(1);
    expect(sign('9-0', '10-0')).toBe(-1);
    expect(sign('0-0', '1796590194577-3')).toBe(-1);
    expect(sign('5', '5-0')).toBe(0);
    expect(sign('5', '5-1')).toBe(-1);
  });

  it('sorts a list of ids as Redis orders them', () => {
    const ids = ['12-1', '3-0', '12-0', '100-0', '12-10', '12-2', '0-0'];
    expect([...ids].sort(compareEntryIds)).toEqual(['0-0', '3-0', '12-0', '12-1', '12-2', '12-10', '100-0']);
  });
});
