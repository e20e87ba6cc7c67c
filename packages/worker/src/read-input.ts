import type { ReadInputRequired, ReadJobData } from '@taskgate/core';
import {
  type ElicitRequestParams,
  ElicitRequestParamsSchema,
  type ElicitResult,
  ElicitResultSchema,
  ProtocolError,
} from '@taskgate/protocol';
import { ClientCapabilityError } from './errors.js';
import type { InputOptions, ToolClient } from './tool-context.js';
import { describeZodIssues } from './zod-issues.js';

/** Thrown by a read's `elicit` whose answer has not come yet: the read answers `input_required`. */
class InputPending extends Error {
  override readonly name = 'InputPending';
}

/**
 * The questions of one read execution. A read is stateless: on a wire with input rounds (2026-07-28) it runs
 * again from the start with every answer the client has given, so `elicit` returns an answer it has and
 * notes a question it has not; the read then answers `input_required` with those questions. Keys default to
 * the call's order in the execution (`elicit-1`, `elicit-2`, …), stable as long as the handler asks the same
 * things for the same answers.
 */
export class ReadInput {
  readonly #answers: Readonly<Record<string, unknown>> | undefined;
  readonly #client: ToolClient;
  readonly #knowsClient: boolean;
  readonly #pending = new Map<string, { method: 'elicitation/create'; params: ElicitRequestParams }>();
  #asked = 0;

  constructor(data: Pick<ReadJobData, 'input' | 'client'>, client: ToolClient) {
    this.#answers = data.input?.answers;
    this.#client = client;
    this.#knowsClient = data.client !== undefined;
  }

  /** `ReadContext.elicit`: the answer under the request's key, or (thrown) the note that it is pending. */
  async elicit(params: ElicitRequestParams, options?: InputOptions): Promise<ElicitResult> {
    this.#asked += 1;
    const parsed = ElicitRequestParamsSchema.safeParse(params);
    if (!parsed.success) throw new TypeError(`Invalid elicitation/create params: ${describeZodIssues(parsed.error)}`);
    if (this.#answers === undefined) {
      throw new ClientCapabilityError(
        "The client's protocol revision (2025-11-25) cannot answer input requests of a read; only tools may ask",
      );
    }
    const capability = this.#client.capabilities.elicitation;
    if (this.#knowsClient && capability === undefined) {
      throw new ClientCapabilityError(
        'The client did not declare the elicitation capability; check ctx.client.capabilities.elicitation first',
      );
    }
    if (this.#knowsClient && parsed.data.mode === 'url' && capability?.url === undefined) {
      throw new ClientCapabilityError('The client did not declare URL-mode elicitation (capabilities.elicitation.url)');
    }
    const key = options?.key ?? `elicit-${this.#asked}`;
    if (Object.hasOwn(this.#answers, key)) {
      const answer = ElicitResultSchema.safeParse(this.#answers[key]);
      if (!answer.success) {
        throw ProtocolError.invalidParams(
          `Invalid params: inputResponses["${key.slice(0, 64)}"] is not an elicitation result: ${describeZodIssues(answer.error)}`,
        );
      }
      return answer.data;
    }
    this.#pending.set(key, { method: 'elicitation/create', params });
    throw new InputPending(`input request '${key}' is waiting for its answer`);
  }

  /** The `input_required` answer when the execution asked something it has no answer for; else undefined. */
  required(): ReadInputRequired | undefined {
    if (this.#pending.size === 0) return undefined;
    return { resultType: 'input_required', inputRequests: Object.fromEntries(this.#pending) };
  }
}
