import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

const commandsDir = new URL('../commands/', import.meta.url);

/** Every Lua script of `commands/`, with its number of keys (the `-N` of its file name). */
export const SCRIPT_KEY_COUNTS = {
  createTask: 3,
  startTask: 1,
  requireInput: 1,
  resumeTask: 1,
  setStatusMessage: 1,
  finishTask: 2,
  cancelTask: 2,
  listPage: 1,
  appendOutbox: 3,
  answerInput: 1,
  streamLease: 2,
  appendEvent: 3,
  relayEvent: 5,
  lease: 1,
  carrierLease: 3,
  bridgePosition: 1,
} as const;

export type ScriptName = keyof typeof SCRIPT_KEY_COUNTS;

/** A script's raw reply: a code and, on success, the task snapshot as JSON. */
export type ScriptReply = [code: number, detail?: string];

/** Reads `name-N.lua` and inlines its `--- @include "includes/x"` lines (each file once). */
export function loadScriptSource(name: ScriptName): string {
  const file = `${name}-${SCRIPT_KEY_COUNTS[name]}.lua`;
  const seen = new Set<string>();
  const expand = (path: string): string =>
    readFileSync(new URL(path, commandsDir), 'utf8').replace(/^--- @include "([^"]+)"$/gm, (_line, include: string) => {
      if (seen.has(include)) return '';
      seen.add(include);
      return expand(`${include}.lua`);
    });
  return expand(file);
}

const sources = new Map<ScriptName, string>();
const registered = new WeakSet<Redis>();

function sourceOf(name: ScriptName): string {
  let lua = sources.get(name);
  if (lua === undefined) {
    lua = loadScriptSource(name);
    sources.set(name, lua);
  }
  return lua;
}

/**
 * Makes sure every script is in the server's script cache (SCRIPT EXISTS, then SCRIPT LOAD for the missing
 * ones, e.g. after a Redis restart or failover): a readiness check, which also proves the server compiles
 * them. One round trip when all are there. Rejects when Redis cannot be reached or refuses a script.
 */
export async function ensureScriptsLoaded(redis: Redis): Promise<void> {
  const names = Object.keys(SCRIPT_KEY_COUNTS) as ScriptName[];
  const shas = names.map((name) => createHash('sha1').update(sourceOf(name)).digest('hex'));
  const present = (await redis.script('EXISTS', ...shas)) as number[];
  const missing = names.filter((_name, i) => present[i] !== 1);
  for (const name of missing) await redis.script('LOAD', sourceOf(name));
}

/**
 * Registers every script on a connection once (ioredis then runs them with EVALSHA, falling back to EVAL
 * after a SCRIPT FLUSH or a failover) and returns a function that runs one by name.
 */
export function scriptRunner(
  redis: Redis,
): (name: ScriptName, keys: string[], args: (string | number)[]) => Promise<unknown> {
  if (!registered.has(redis)) {
    for (const name of Object.keys(SCRIPT_KEY_COUNTS) as ScriptName[]) {
      redis.defineCommand(`taskgate_${name}`, { numberOfKeys: SCRIPT_KEY_COUNTS[name], lua: sourceOf(name) });
    }
    registered.add(redis);
  }
  return (name, keys, args) => {
    if (keys.length !== SCRIPT_KEY_COUNTS[name]) {
      throw new Error(`script ${name} takes ${SCRIPT_KEY_COUNTS[name]} keys, got ${keys.length}`);
    }
    // biome-ignore lint/suspicious/noExplicitAny: ioredis adds defined commands to the client at run time.
    return (redis as any)[`taskgate_${name}`](...keys, ...args) as Promise<unknown>;
  };
}
