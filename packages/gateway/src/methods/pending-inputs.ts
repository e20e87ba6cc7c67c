import type { AskedTogether, InputRequests, StoredTask, TaskOutbox } from '@taskgate/core';
import { ProtocolError, RELATED_TASK_META_KEY } from '@taskgate/protocol';

/** What reading and answering a task's input requests uses. */
export interface InputServices {
  readonly outbox: TaskOutbox;
  readonly inputs: InputRequests;
}

/** An input request as a revision without relayed requests shows it: the server-to-client request, by key. */
export type InputRequestsView = Record<string, { method: string; params: Record<string, unknown> }>;

/** A pending input request of a task: its request id (where the answer goes) and what the client sees. */
interface PendingInput {
  readonly requestId: string;
  readonly request: { method: string; params: Record<string, unknown> };
}

/**
 * The task's input requests still waiting for an answer, by key (the tool's key, else the request id), from
 * its outbox. The related-task `_meta` of relayed requests is left out: the task id is the request's context.
 * `complete`: every request asked in the same turn as a pending one is posted; undefined when a pending one
 * does not say (written by an earlier version).
 */
async function pending(
  services: InputServices,
  taskId: string,
): Promise<{ byKey: Map<string, PendingInput>; complete: boolean | undefined }> {
  const entries = await services.outbox.range(taskId, '-', '+');
  const byId = new Map<string, { key: string; request: PendingInput['request']; together?: AskedTogether }>();
  /** Per turn: how many of its requests are posted, and how many it asked. */
  const turns = new Map<string, { posted: number; of: number }>();
  for (const { message } of entries) {
    if (message.type !== 'request') continue;
    const { [RELATED_TASK_META_KEY]: _related, ...meta } = (message.params._meta ?? {}) as Record<string, unknown>;
    const { _meta: _sent, ...rest } = message.params;
    const params = Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta };
    const { together } = message;
    byId.set(message.requestId, {
      key: message.key ?? message.requestId,
      request: { method: message.method, params },
      ...(together !== undefined && { together }),
    });
    if (together === undefined) continue;
    const turn = turns.get(together.id) ?? { posted: 0, of: 0 };
    turns.set(together.id, { posted: turn.posted + 1, of: Math.max(turn.of, together.of) });
  }
  const open = await services.inputs.unanswered(taskId, [...byId.keys()]);
  const byKey = new Map<string, PendingInput>();
  let complete: boolean | undefined = true;
  for (const requestId of open) {
    const found = byId.get(requestId);
    if (found === undefined) continue;
    byKey.set(found.key, { requestId, request: found.request });
    const turn = found.together === undefined ? undefined : turns.get(found.together.id);
    if (turn === undefined) complete = complete === false ? false : undefined;
    else if (turn.posted < turn.of) complete = false;
  }
  return { byKey, complete };
}

/** The task's pending input requests, by key. */
export async function pendingInputs(services: InputServices, taskId: string): Promise<InputRequestsView> {
  return (await pendingRound(services, taskId)).inputs;
}

/**
 * The task's pending input requests, by key, and whether the tool has posted every request it asked
 * together with them (`complete`; undefined when a request does not say).
 */
export async function pendingRound(
  services: InputServices,
  taskId: string,
): Promise<{ inputs: InputRequestsView; complete: boolean | undefined }> {
  const { byKey, complete } = await pending(services, taskId);
  const inputs: InputRequestsView = {};
  for (const [key, { request }] of byKey) inputs[key] = request;
  return { inputs, complete };
}

/** The pauses of `requestsOfWaitingTask` before each re-read (ms): at most 310 ms in all. */
const POSTING_PAUSES_MS = [10, 20, 40, 80, 160];

/**
 * The pending requests of a task that shows `input_required`. A tool's worker sets that status just before it
 * posts the request (so every stream shows the status first); a view read in between would show the status
 * without what it waits for, so an empty read is retried over a few hundred milliseconds before it stands.
 */
export async function requestsOfWaitingTask(services: InputServices, taskId: string): Promise<InputRequestsView> {
  let view = await pendingInputs(services, taskId);
  for (const ms of POSTING_PAUSES_MS) {
    if (Object.keys(view).length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, ms));
    view = await pendingInputs(services, taskId);
  }
  return view;
}

/**
 * Records the answers of `inputResponses` to the task's pending requests, by key. Keys that name no pending
 * request of the task (unknown, answered before) are ignored. -32602 names an answer that is not an object.
 */
export async function answerInputs(services: InputServices, task: StoredTask, responses: unknown): Promise<number> {
  if (responses === undefined) return 0;
  if (typeof responses !== 'object' || responses === null || Array.isArray(responses)) {
    throw ProtocolError.invalidParams('Invalid params: params.inputResponses must be an object of answers by key');
  }
  const entries = Object.entries(responses as Record<string, unknown>);
  const open = (await pending(services, task.taskId)).byKey;
  for (const [key, value] of entries) {
    if (open.has(key) && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      throw ProtocolError.invalidParams(
        `Invalid params: params.inputResponses["${key.slice(0, 64)}"] must be an object`,
      );
    }
  }
  let answered = 0;
  for (const [key, value] of entries) {
    const input = open.get(key);
    if (input === undefined) continue;
    const outcome = await services.inputs.answer(input.requestId, task.ownerId, {
      result: value as Record<string, unknown>,
    });
    if (outcome === 'ok') answered++;
  }
  return answered;
}
