import type { TaskStatus } from '@taskgate/protocol';
import { isTerminalStatus } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import { TaskgateError } from '../errors.js';
import { ScriptCode } from './script-codes.js';
import { type ScriptName, scriptRunner } from './scripts.js';

/** A transition script's reply: the changed task's snapshot (JSON), or why nothing changed. */
export type TransitionReply =
  | { readonly kind: 'changed'; readonly snapshot: string }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'terminal'; readonly status: TaskStatus }
  | { readonly kind: 'illegal'; readonly status: TaskStatus }
  | WrongSessionKeys;

/** The session keys a script was given are not the task's: re-read them and run the script again. */
export type WrongSessionKeys = { readonly kind: 'wrong_session_keys' };

export type CreateTaskReply =
  | { readonly kind: 'created'; readonly snapshot: string }
  | { readonly kind: 'exists' }
  | { readonly kind: 'limit'; readonly active: number };

export type AppendOutboxReply =
  | { readonly kind: 'appended'; readonly entryId: string }
  | { readonly kind: 'not_found' }
  | WrongSessionKeys;

export type AnswerInputReply =
  | { readonly kind: 'recorded'; readonly taskId: string }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'answered' };

export type StreamLeaseReply = { readonly kind: 'ok' } | { readonly kind: 'not_found' } | { readonly kind: 'not_held' };
export type LeaseReply = { readonly kind: 'ok' } | { readonly kind: 'not_held' };
export type CarrierLeaseReply =
  | { readonly kind: 'ok' }
  | { readonly kind: 'not_held' }
  | { readonly kind: 'fenced' }
  | WrongSessionKeys;
export type AppendEventReply = { readonly kind: 'appended'; readonly entryId: string } | { readonly kind: 'fenced' };
export type RelayEventReply =
  | { readonly kind: 'relayed'; readonly entryId: string }
  | { readonly kind: 'fenced' }
  | { readonly kind: 'not_carrier' }
  | { readonly kind: 'stale' };
export type BridgePositionReply =
  | { readonly kind: 'ok'; readonly position: string }
  | { readonly kind: 'stale' }
  | { readonly kind: 'not_held' };
export type CreateSessionReply = { readonly kind: 'created' } | { readonly kind: 'limit'; readonly live: number };
/** One entry of an owner's task index. */
export interface ListPageEntry {
  readonly id: string;
  readonly score: number;
}

type Arg = string | number;

function unexpected(name: ScriptName, raw: unknown): TaskgateError {
  return new TaskgateError('UNEXPECTED_SCRIPT_REPLY', `${name} replied ${JSON.stringify(raw)}`);
}

/** The code and detail of a `{ code, detail? }` reply, or a TaskgateError naming the script. */
function coded(name: ScriptName, raw: unknown): { code: number; detail: unknown } {
  if (!Array.isArray(raw) || typeof raw[0] !== 'number') throw unexpected(name, raw);
  return { code: raw[0], detail: raw[1] };
}

function text(name: ScriptName, raw: unknown, detail: unknown): string {
  if (typeof detail !== 'string') throw unexpected(name, raw);
  return detail;
}

function status(name: ScriptName, raw: unknown, detail: unknown): TaskStatus {
  const value = text(name, raw, detail);
  if (!isTerminalStatus(value as TaskStatus) && value !== 'working' && value !== 'input_required') {
    throw unexpected(name, raw);
  }
  return value as TaskStatus;
}

/** Decodes a transition script's reply (createTask excepted). */
export function decodeTransition(name: ScriptName, raw: unknown): TransitionReply {
  const { code, detail } = coded(name, raw);
  switch (code) {
    case ScriptCode.Ok:
      return { kind: 'changed', snapshot: text(name, raw, detail) };
    case ScriptCode.NotFound:
      return { kind: 'not_found' };
    case ScriptCode.Terminal:
      return { kind: 'terminal', status: status(name, raw, detail) };
    case ScriptCode.IllegalTransition:
      return { kind: 'illegal', status: status(name, raw, detail) };
    case ScriptCode.WrongSessionKeys:
      return { kind: 'wrong_session_keys' };
    default:
      throw unexpected(name, raw);
  }
}

export function decodeCreateTask(raw: unknown): CreateTaskReply {
  const { code, detail } = coded('createTask', raw);
  if (code === ScriptCode.Ok) return { kind: 'created', snapshot: text('createTask', raw, detail) };
  if (code === ScriptCode.AlreadyExists) return { kind: 'exists' };
  if (code === ScriptCode.LimitExceeded && typeof detail === 'number') return { kind: 'limit', active: detail };
  throw unexpected('createTask', raw);
}

export function decodeListPage(raw: unknown): ListPageEntry[] {
  if (!Array.isArray(raw) || raw.length % 2 !== 0) throw unexpected('listPage', raw);
  const entries: ListPageEntry[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const [id, score] = [raw[i], Number(raw[i + 1])];
    if (typeof id !== 'string' || !Number.isFinite(score)) throw unexpected('listPage', raw);
    entries.push({ id, score });
  }
  return entries;
}

export function decodeAppendOutbox(raw: unknown): AppendOutboxReply {
  const { code, detail } = coded('appendOutbox', raw);
  if (code === ScriptCode.Ok) return { kind: 'appended', entryId: text('appendOutbox', raw, detail) };
  if (code === ScriptCode.NotFound) return { kind: 'not_found' };
  if (code === ScriptCode.WrongSessionKeys) return { kind: 'wrong_session_keys' };
  throw unexpected('appendOutbox', raw);
}

export function decodeAnswerInput(raw: unknown): AnswerInputReply {
  const { code, detail } = coded('answerInput', raw);
  if (code === ScriptCode.Ok) return { kind: 'recorded', taskId: text('answerInput', raw, detail) };
  if (code === ScriptCode.NotFound) return { kind: 'not_found' };
  if (code === ScriptCode.Answered) return { kind: 'answered' };
  throw unexpected('answerInput', raw);
}

export function decodeStreamLease(raw: unknown): StreamLeaseReply {
  const { code } = coded('streamLease', raw);
  if (code === ScriptCode.Ok) return { kind: 'ok' };
  if (code === ScriptCode.NotFound) return { kind: 'not_found' };
  if (code === ScriptCode.NotHeld) return { kind: 'not_held' };
  throw unexpected('streamLease', raw);
}

export function decodeLease(raw: unknown): LeaseReply {
  const { code } = coded('lease', raw);
  if (code === ScriptCode.Ok) return { kind: 'ok' };
  if (code === ScriptCode.NotHeld) return { kind: 'not_held' };
  throw unexpected('lease', raw);
}

export function decodeCarrierLease(raw: unknown): CarrierLeaseReply {
  const { code } = coded('carrierLease', raw);
  if (code === ScriptCode.Ok) return { kind: 'ok' };
  if (code === ScriptCode.NotHeld) return { kind: 'not_held' };
  if (code === ScriptCode.Fenced) return { kind: 'fenced' };
  if (code === ScriptCode.WrongSessionKeys) return { kind: 'wrong_session_keys' };
  throw unexpected('carrierLease', raw);
}

export function decodeAppendEvent(raw: unknown): AppendEventReply {
  const { code, detail } = coded('appendEvent', raw);
  if (code === ScriptCode.Ok) return { kind: 'appended', entryId: text('appendEvent', raw, detail) };
  if (code === ScriptCode.Fenced) return { kind: 'fenced' };
  throw unexpected('appendEvent', raw);
}

export function decodeRelayEvent(raw: unknown): RelayEventReply {
  const { code, detail } = coded('relayEvent', raw);
  if (code === ScriptCode.Ok) return { kind: 'relayed', entryId: text('relayEvent', raw, detail) };
  if (code === ScriptCode.Fenced) return { kind: 'fenced' };
  if (code === ScriptCode.NotCarrier) return { kind: 'not_carrier' };
  if (code === ScriptCode.Stale) return { kind: 'stale' };
  throw unexpected('relayEvent', raw);
}

export function decodeBridgePosition(raw: unknown): BridgePositionReply {
  const { code, detail } = coded('bridgePosition', raw);
  if (code === ScriptCode.Ok) return { kind: 'ok', position: typeof detail === 'string' ? detail : '' };
  if (code === ScriptCode.Stale) return { kind: 'stale' };
  if (code === ScriptCode.NotHeld) return { kind: 'not_held' };
  throw unexpected('bridgePosition', raw);
}

export function decodeCreateSession(raw: unknown): CreateSessionReply {
  const { code, detail } = coded('createSession', raw);
  if (code === ScriptCode.Ok) return { kind: 'created' };
  if (code === ScriptCode.LimitExceeded && typeof detail === 'number') return { kind: 'limit', live: detail };
  throw unexpected('createSession', raw);
}

type TransitionName = 'startTask' | 'requireInput' | 'resumeTask' | 'setStatusMessage' | 'finishTask' | 'cancelTask';

/**
 * One typed method per Lua script of `commands/`: its keys and arguments as the script's header documents
 * them, its reply decoded into a union. The stores run scripts only through this.
 */
export class Scripts {
  readonly #run: ReturnType<typeof scriptRunner>;

  constructor(redis: Redis) {
    this.#run = scriptRunner(redis);
  }

  /**
   * KEYS: task, owner's tasks, owner's active. ARGV: id, ttl, pollInterval, owner, limit, extra fields, listed,
   * pod, and now (ms; '' for the server's TIME).
   */
  async createTask(
    keys: [string, string, string],
    args: [string, number, Arg, string, number, string, '1' | '0', string, Arg],
  ) {
    return decodeCreateTask(await this.#run('createTask', keys, args));
  }

  /**
   * A status transition: KEYS task, its channel, its session's feed and channel (and the owner's active tasks
   * for finish and cancel); ARGV task id, ….
   */
  async transition(name: TransitionName, keys: string[], args: Arg[]): Promise<TransitionReply> {
    return decodeTransition(name, await this.#run(name, keys, args));
  }

  /** KEYS: owner's tasks. ARGV: page size, last score ('' first page), last id. */
  async listPage(keys: [string], args: [number, Arg, string]): Promise<ListPageEntry[]> {
    return decodeListPage(await this.#run('listPage', keys, args));
  }

  /** KEYS: task, outbox, carrier lease, task channel (announces arrivals too), session feed, session channel. ARGV: message, max, task id. */
  async appendOutbox(keys: [string, string, string, string, string, string], args: [string, number, string, string]) {
    return decodeAppendOutbox(await this.#run('appendOutbox', keys, args));
  }

  /** KEYS: input request, its channel. ARGV: owner id, answer JSON. */
  async answerInput(keys: [string, string], args: [string, string]) {
    return decodeAnswerInput(await this.#run('answerInput', keys, args));
  }

  /** KEYS: session's stream lease, session, session's feed. ARGV: op, stream id, lease ms, idle ttl ms. */
  async streamLease(keys: [string, string, string], args: [string, string, number, number]) {
    return decodeStreamLease(await this.#run('streamLease', keys, args));
  }

  /** KEYS: session, the principal's sessions. ARGV: session digest, idle ttl ms, limit, fields JSON. */
  async createSession(keys: [string, string], args: [string, number, number, string]) {
    return decodeCreateSession(await this.#run('createSession', keys, args));
  }

  /** KEYS: event log, connection lease, stream state. ARGV: see appendEvent-3.lua (8). */
  async appendEvent(
    keys: [string, string, string],
    args: [string, string, number, number, string, string, string?, Arg?],
  ) {
    const given = args.filter((arg): arg is Arg => arg !== undefined);
    return decodeAppendEvent(await this.#run('appendEvent', keys, given));
  }

  /** KEYS: event log, connection lease, stream state, the task's carrier lease. ARGV: see finishStream-4.lua (7). */
  async finishStream(
    keys: [string, string, string, string],
    args: [string, string, number, number, string, 'event' | 'state', string],
  ) {
    const raw = await this.#run('finishStream', keys, args);
    const { code, detail } = coded('finishStream', raw);
    if (code === ScriptCode.Ok) return { kind: 'appended', entryId: text('finishStream', raw, detail) } as const;
    if (code === ScriptCode.Fenced) return { kind: 'fenced' } as const;
    throw unexpected('finishStream', raw);
  }

  /** KEYS: event log, connection lease, stream state, carrier lease, relay state. ARGV: see relayEvent-5.lua (10). */
  async relayEvent(
    keys: [string, string, string, string, string],
    args: [string, string, string, string, string, number, number, Arg, string, string],
  ) {
    return decodeRelayEvent(await this.#run('relayEvent', keys, args));
  }

  /** KEYS: a bridge position hash. ARGV: op ('hold', 'advance', 'release'), holder, lease ms, entry id (advance). */
  async bridgePosition(keys: [string], args: [string, string, number, string?]) {
    const given = args.filter((arg): arg is string | number => arg !== undefined);
    return decodeBridgePosition(await this.#run('bridgePosition', keys, given));
  }

  /** KEYS: the lease. ARGV: op, holder, lease ms. */
  async lease(keys: [string], args: [string, string, number]) {
    return decodeLease(await this.#run('lease', keys, args));
  }

  /**
   * KEYS: carrier lease, connection lease, task, session feed, session channel. ARGV: op, stream id,
   * connection id, lease ms, task id.
   */
  async carrierLease(keys: [string, string, string, string, string], args: [string, string, string, number, string]) {
    return decodeCarrierLease(await this.#run('carrierLease', keys, args));
  }
}
