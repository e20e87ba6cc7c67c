import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Cluster, type Redis } from 'ioredis';
import { inSpan, redisSpansOn, SpanKind } from '../telemetry/tracing.js';
import { isClusterConnection } from './connection.js';

const commandsDir = new URL('../../commands/', import.meta.url);

/** Every Lua script of `commands/`, with its number of keys (the `-N` of its file name). */
export const SCRIPT_KEY_COUNTS = {
  createTask: 3,
  startTask: 4,
  requireInput: 4,
  resumeTask: 4,
  setStatusMessage: 4,
  finishTask: 5,
  cancelTask: 5,
  listPage: 1,
  appendOutbox: 6,
  answerInput: 2,
  streamLease: 3,
  appendEvent: 3,
  finishStream: 4,
  relayEvent: 5,
  lease: 1,
  carrierLease: 5,
  bridgePosition: 1,
  createSession: 2,
} as const;

export type ScriptName = keyof typeof SCRIPT_KEY_COUNTS;

/** A script's raw reply: a code and, on success, the task snapshot as JSON. */
export type ScriptReply = [code: number, detail?: string];

/**
 * How a script publishes on the channels of one slot (a task's, a session's, a request's): sharded pub/sub
 * on a cluster (SPUBLISH: only the slot's shard carries the message), classic PUBLISH on a single server.
 */
export type PublishMode = 'sharded' | 'classic';

/**
 * Reads `name-N.lua`, inlines its `--- @include "includes/x"` lines (each file once) and defines
 * `SHARD_PUBLISH`, the command its shard-channel publishes use (see PublishMode).
 */
export function loadScriptSource(name: ScriptName, mode: PublishMode = 'classic'): string {
  const file = `${name}-${SCRIPT_KEY_COUNTS[name]}.lua`;
  const seen = new Set<string>();
  const expand = (path: string): string =>
    readFileSync(new URL(path, commandsDir), 'utf8').replace(/^--- @include "([^"]+)"$/gm, (_line, include: string) => {
      if (seen.has(include)) return '';
      seen.add(include);
      return expand(`${include}.lua`);
    });
  const publish = mode === 'sharded' ? 'SPUBLISH' : 'PUBLISH';
  return `local SHARD_PUBLISH = '${publish}'\n${expand(file)}`;
}

const sources = new Map<string, string>();
const registered = new WeakSet<Redis>();

function sourceOf(name: ScriptName, mode: PublishMode): string {
  let lua = sources.get(`${mode}:${name}`);
  if (lua === undefined) {
    lua = loadScriptSource(name, mode);
    sources.set(`${mode}:${name}`, lua);
  }
  return lua;
}

/** Sharded on a cluster connection, classic on any other. */
export function publishMode(redis: Redis): PublishMode {
  return isClusterConnection(redis) ? 'sharded' : 'classic';
}

/**
 * Makes sure every script is in the server's script cache (SCRIPT EXISTS, then SCRIPT LOAD for the missing
 * ones, e.g. after a Redis restart or failover): a readiness check, which also proves the server compiles
 * them. One round trip when all are there. Rejects when Redis cannot be reached or refuses a script.
 */
export async function ensureScriptsLoaded(redis: Redis): Promise<void> {
  // Each node of a cluster has its own script cache: every master must have them.
  const cluster: unknown = redis;
  const servers = cluster instanceof Cluster ? cluster.nodes('master') : [redis];
  if (servers.length === 0) throw new Error('no Redis Cluster master is reachable');
  const mode = publishMode(redis);
  const names = Object.keys(SCRIPT_KEY_COUNTS) as ScriptName[];
  const shas = names.map((name) => createHash('sha1').update(sourceOf(name, mode)).digest('hex'));
  for (const server of servers) {
    const present = (await server.script('EXISTS', ...shas)) as number[];
    const missing = names.filter((_name, i) => present[i] !== 1);
    for (const name of missing) await server.script('LOAD', sourceOf(name, mode));
  }
}

/**
 * Registers every script on a connection once (ioredis then runs them with EVALSHA, falling back to EVAL
 * after a SCRIPT FLUSH or a failover) and returns a function that runs one by name.
 */
export function scriptRunner(
  redis: Redis,
): (name: ScriptName, keys: string[], args: (string | number)[]) => Promise<unknown> {
  if (!registered.has(redis)) {
    const mode = publishMode(redis);
    for (const name of Object.keys(SCRIPT_KEY_COUNTS) as ScriptName[]) {
      redis.defineCommand(`taskgate_${name}`, { numberOfKeys: SCRIPT_KEY_COUNTS[name], lua: sourceOf(name, mode) });
    }
    registered.add(redis);
  }
  return (name, keys, args) => {
    if (keys.length !== SCRIPT_KEY_COUNTS[name]) {
      throw new Error(`script ${name} takes ${SCRIPT_KEY_COUNTS[name]} keys, got ${keys.length}`);
    }
    // biome-ignore lint/suspicious/noExplicitAny: ioredis adds defined commands to the client at run time.
    const run = () => (redis as any)[`taskgate_${name}`](...keys, ...args) as Promise<unknown>;
    if (!redisSpansOn()) return run();
    // A debugging aid (TASKGATE_TRACE_REDIS): the script's name only, never its keys or arguments.
    const attributes = { 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA', 'db.stored_procedure.name': name };
    return inSpan(`EVALSHA ${name}`, { kind: SpanKind.CLIENT, attributes }, run);
  };
}
