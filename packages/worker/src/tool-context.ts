import type { Logger } from '@taskgate/core';
import type {
  ClientCapabilities,
  CreateMessageRequestParams,
  CreateMessageResult,
  CreateMessageResultWithTools,
  ElicitRequestParams,
  ElicitResult,
  Implementation,
  ListRootsResult,
  LoggingLevel,
} from '@taskgate/protocol';

/** How a tool names one request for input. */
export interface InputOptions {
  /**
   * The request's key among the `inputRequests` a 2026-07-28 client sees (what its answer comes back under);
   * unique within the task. Default: the request's random id. A 2025-11-25 client sees no key.
   */
  readonly key?: string;
  /**
   * Whether an elicitation or sampling request goes out as a client task (CLT-1, revision 2025-11-25): `auto`
   * (the default) where the client declared `tasks.requests.elicitation.create` /
   * `tasks.requests.sampling.createMessage` and `TASKGATE_CLIENT_TASKS` is `auto`; `true` demands it
   * (ClientCapabilityError without the capability); `false` sends a plain request.
   */
  readonly asTask?: ClientTaskMode;
  /**
   * Gives up this one request when it aborts (the task's own signal always does): the wait rejects with its
   * reason, and a client task is cancelled where the client declared `tasks.cancel`.
   */
  readonly signal?: AbortSignal;
}

/** How `ctx.elicit` / `ctx.sample` may ask: as a client task where possible, always, or never. */
export type ClientTaskMode = 'auto' | boolean;

/** The client whose request started the task, as its session declared it at `initialize`. */
export interface ToolClient {
  /** Check these before `elicit` / `sample`: a client that did not declare the capability cannot answer. */
  readonly capabilities: ClientCapabilities;
  readonly info?: Implementation;
}

/**
 * What a tool handler gets besides its arguments. Everything goes through Redis, so it works whichever
 * gateway the client talks to. `progress`, `log` and `setStatusMessage` keep their call order and never
 * reject (a task that is gone simply drops them); awaiting them is optional.
 */
export interface ToolContext {
  readonly taskId: string;
  /** Aborted when the task is cancelled, expires, times out, or the worker shuts down; `reason` says which. */
  readonly signal: AbortSignal;
  /** 1 for the first execution of this task, 2 for the first retry, and so on. */
  readonly attempt: number;
  /** Reports progress (the gateway relays it with the request's progressToken); `progress` should increase. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Sends a log message to the client (`notifications/message`). */
  log(level: LoggingLevel, data: unknown, logger?: string): Promise<void>;
  /**
   * Tells the sessions subscribed to `uri` (`resources/subscribe`) that the resource changed: any gateway
   * sends them `notifications/resources/updated` on their GET stream.
   */
  resourceUpdated(uri: string): Promise<void>;
  /**
   * Tells clients that the list of tools, resources or prompts changed (list_changed news on every gateway,
   * for session GET streams and `subscriptions/listen` streams that asked for it).
   */
  listChanged(kind: 'tools' | 'resources' | 'prompts'): Promise<void>;
  /** Replaces the task's `statusMessage`, which `tasks/get` shows. */
  setStatusMessage(text: string): Promise<void>;
  /**
   * Asks the user through the client (`elicitation/create`): the task is `input_required` until the answer
   * arrives. Rejects with a `ProtocolError` when the client answers with an error, an `InputWaitError` on
   * timeout, the signal's reason when the task is aborted, and a `ClientCapabilityError` when the client
   * did not declare elicitation (or URL mode).
   */
  elicit(params: ElicitRequestParams, options?: InputOptions): Promise<ElicitResult>;
  /** Asks the client's model for a completion (`sampling/createMessage`); otherwise like `elicit`. */
  sample(
    params: CreateMessageRequestParams,
    options?: InputOptions,
  ): Promise<CreateMessageResult | CreateMessageResultWithTools>;
  /** Asks the client for its roots (`roots/list`); otherwise like `elicit` (capability `roots`). */
  listRoots(options?: InputOptions): Promise<ListRootsResult>;
  readonly client: ToolClient;
  /** The authenticated principal that owns the task, when auth is on. */
  readonly principal: string | undefined;
  /** A logger bound to this task, tool and attempt. Never log tool arguments at info or above. */
  readonly logger: Logger;
}
