import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { loadScriptSource, SCRIPT_KEY_COUNTS, type ScriptName } from '../src/index.js';
import { ScriptCode } from '../src/redis/script-codes.js';
import { scriptRunner } from '../src/redis/scripts.js';

const commandsDir = fileURLToPath(new URL('../commands/', import.meta.url));
const names = Object.keys(SCRIPT_KEY_COUNTS) as ScriptName[];
const read = (file: string): string => readFileSync(`${commandsDir}${file}`, 'utf8');

/** The leading `--[[ ... ]]` comment of a script, and the code after it. */
function split(source: string): { header: string; body: string } {
  const match = /^--\[\[([\s\S]*?)\]\]\n([\s\S]*)$/.exec(source);
  if (match === null) throw new Error('script does not open with a --[[ ... ]] header');
  return { header: match[1]!, body: match[2]! };
}

const numbers = (text: string, pattern: RegExp): number[] =>
  [...new Set([...text.matchAll(pattern)].map((m) => Number(m[1])))].sort((a, b) => a - b);
const oneTo = (n: number): number[] => Array.from({ length: n }, (_v, i) => i + 1);

describe('Lua scripts', () => {
  it('every registered script is commands/<name>-<N>.lua and its header lists exactly KEYS[1]..KEYS[N]', () => {
    for (const name of names) {
      const n = SCRIPT_KEY_COUNTS[name];
      const file = `${name}-${n}.lua`;
      expect(existsSync(`${commandsDir}${file}`), file).toBe(true);
      const { header, body } = split(read(file));
      const keyLines = [...header.matchAll(/^\s*KEYS\[(\d+)\]\s+\S.*$/gm)].map((m) => Number(m[1]));
      expect(keyLines, `${file} header KEYS lines`).toEqual(oneTo(n));
      // The code uses no key beyond N, and every ARGV it reads is documented.
      for (const key of numbers(body, /KEYS\[(\d+)\]/g))
        expect(key, `${file} uses KEYS[${key}]`).toBeLessThanOrEqual(n);
      const documented = numbers(header, /^\s*ARGV\[(\d+)\]\s+\S/gm);
      expect(documented, `${file} ARGV lines are numbered 1..n`).toEqual(oneTo(documented.length));
      for (const arg of numbers(body, /ARGV\[(\d+)\]/g))
        expect(documented, `${file} documents ARGV[${arg}]`).toContain(arg);
      expect(header, `${file} documents its output`).toMatch(/Output:/);
    }
  });

  it('every top-level .lua file of commands/ is registered with the key count of its name', () => {
    const files = readdirSync(commandsDir).filter((f) => f.endsWith('.lua'));
    expect(files.length).toBe(names.length);
    for (const file of files) {
      const match = /^(\w+)-(\d+)\.lua$/.exec(file);
      expect(match, `${file} is named name-N.lua`).not.toBeNull();
      expect(SCRIPT_KEY_COUNTS[match![1] as ScriptName], file).toBe(Number(match![2]));
    }
  });

  it('every @include resolves, every include is used, and the expanded scripts compile on Redis', async () => {
    const used = new Set<string>();
    const visit = (file: string): void => {
      for (const m of read(file).matchAll(/^--- @include "([^"]+)"$/gm)) {
        const include = `${m[1]}.lua`;
        expect(existsSync(`${commandsDir}${include}`), `${file} includes ${include}`).toBe(true);
        if (!used.has(include)) {
          used.add(include);
          visit(include);
        }
      }
    };
    for (const name of names) visit(`${name}-${SCRIPT_KEY_COUNTS[name]}.lua`);
    expect([...used].sort()).toEqual(
      readdirSync(`${commandsDir}includes`)
        .map((f) => `includes/${f}`)
        .sort(),
    );
    for (const name of names) {
      const source = loadScriptSource(name);
      expect(source, name).not.toMatch(/@include/);
      // Each helper is defined once even when several includes pull in the same file.
      for (const fn of source.matchAll(/^local function (\w+)/gm)) {
        expect(source.split(`local function ${fn[1]}(`).length, `${name}: ${fn[1]} defined once`).toBe(2);
      }
    }
  });

  it('ScriptCode mirrors includes/codes.lua', () => {
    const lua = Object.fromEntries(
      [...read('includes/codes.lua').matchAll(/^local (\w+) = (-?\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]),
    );
    const upper = (name: string) => name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
    expect(Object.fromEntries(Object.entries(ScriptCode).map(([k, v]) => [upper(k), v]))).toEqual(lua);
  });
});

describe('Lua scripts on Redis', () => {
  const redis = useRedis();

  it('every script loads on the server, and the runner refuses a wrong number of keys', async () => {
    const conn = redis.connect();
    for (const name of names) {
      const sha = await conn.script('LOAD', loadScriptSource(name));
      expect(sha).toMatch(/^[0-9a-f]{40}$/);
    }
    const run = scriptRunner(conn);
    expect(() => run('createTask', ['only-one'], [])).toThrow('script createTask takes 3 keys, got 1');
    expect(() => run('listPage', [], [])).toThrow('script listPage takes 1 keys, got 0');
  });
});
