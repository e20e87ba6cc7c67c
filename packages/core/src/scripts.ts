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
  appendOutbox: 2,
  answerInput: 1,
  streamLease: 2,
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

/**
 * Registers every script on a connection once (ioredis then runs them with EVALSHA, falling back to EVAL
 * after a SCRIPT FLUSH or a failover) and returns a function that runs one by name.
 */
export function scriptRunner(
  redis: Redis,
): (name: ScriptName, keys: string[], args: (string | number)[]) => Promise<unknown> {
  if (!registered.has(redis)) {
    for (const name of Object.keys(SCRIPT_KEY_COUNTS) as ScriptName[]) {
      let lua = sources.get(name);
      if (lua === undefined) {
        lua = loadScriptSource(name);
        sources.set(name, lua);
      }
      redis.defineCommand(`taskgate_${name}`, { numberOfKeys: SCRIPT_KEY_COUNTS[name], lua });
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
