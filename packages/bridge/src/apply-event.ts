import type { ExistingQueueEvent, Logger, TaskOutbox, TaskRef, TaskStore } from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import type { BridgeMetrics } from './bridge-metrics.js';
import type { AnyBridgedToolConfig, BridgedToolConfig } from './config.js';
import { completedResult, failedResult, progressOf } from './mapping.js';

export interface ApplierDeps {
  readonly store: TaskStore;
  readonly outbox: TaskOutbox;
  readonly metrics: BridgeMetrics;
  readonly logger: Logger;
}

/** A bridged task, as the job of the same id finds it: its ref and its tool's config. */
export interface BridgedTask {
  readonly ref: TaskRef;
  readonly tool: BridgedToolConfig;
}

function firstText(result: CallToolResult): string | undefined {
  const block = result.content.find((item) => item.type === 'text');
  return block?.type === 'text' ? block.text : undefined;
}

/**
 * Applies what happened to jobs of existing queues to the tasks whose id is the job id: progress becomes
 * the task's progress notifications (its outbox) and statusMessage, a finished job finishes the task. Jobs
 * that are not working bridged tasks of the queue's tools are ignored. A finish of a task that ended
 * already is refused by the store, so applying a completion twice changes nothing (and counts once).
 */
export class EventApplier {
  readonly #deps: ApplierDeps;

  constructor(deps: ApplierDeps) {
    this.#deps = deps;
  }

  /** The working bridged task of one of `tools` the event is about, if there is one. */
  async taskOf(event: ExistingQueueEvent, tools: ReadonlyMap<string, BridgedToolConfig>) {
    return event.kind === 'other' ? undefined : await this.#task(event.jobId, tools);
  }

  /** The working (or input_required) bridged task of one of `tools` with this id, if there is one. */
  async working<T extends AnyBridgedToolConfig>(
    taskId: string,
    tools: ReadonlyMap<string, T>,
  ): Promise<{ readonly ref: TaskRef; readonly tool: T } | undefined> {
    return await this.#task(taskId, tools);
  }

  /** The name of the tool the task `taskId` ran, if the task exists. */
  async toolOf(taskId: string): Promise<string | undefined> {
    return (await this.#deps.store.read(taskId))?.tool;
  }

  /** The tool of `taskId` when the task was cancelled (undefined when it was not, or is gone). */
  async cancelledTool(taskId: string): Promise<string | undefined> {
    const task = await this.#deps.store.read(taskId);
    return task?.status === 'cancelled' ? task.tool : undefined;
  }

  /** Reports progress of the task: its progress notification (its outbox) and statusMessage. */
  async report(ref: TaskRef, reported: { progress: number; total?: number; message?: string }): Promise<void> {
    await this.#deps.outbox.append(ref.taskId, {
      type: 'progress',
      progress: reported.progress,
      ...(reported.total !== undefined && { total: reported.total }),
      ...(reported.message !== undefined && { message: reported.message }),
    });
    const of = reported.total !== undefined ? ` of ${reported.total}` : '';
    await this.#deps.store.setStatusMessage(ref, reported.message ?? `Progress ${reported.progress}${of}`);
  }

  /** Sets the task's statusMessage. */
  async status(ref: TaskRef, text: string): Promise<void> {
    await this.#deps.store.setStatusMessage(ref, text);
  }

  async #task<T extends AnyBridgedToolConfig>(
    taskId: string,
    tools: ReadonlyMap<string, T>,
  ): Promise<{ readonly ref: TaskRef; readonly tool: T } | undefined> {
    if (taskId === '') return undefined;
    const task = await this.#deps.store.read(taskId);
    const tool = task?.tool === undefined ? undefined : tools.get(task.tool);
    if (task === undefined || tool === undefined) return undefined;
    if (task.status !== 'working' && task.status !== 'input_required') return undefined;
    return { ref: { taskId, ownerId: task.ownerId }, tool };
  }

  /** Applies one event to its task (from `taskOf`); true when it changed the task. */
  async apply(event: ExistingQueueEvent, task: BridgedTask): Promise<boolean> {
    const { ref, tool } = task;
    switch (event.kind) {
      case 'progress': {
        const reported = progressOf(event.data);
        if (reported === undefined) return false;
        await this.report(ref, reported);
        return true;
      }
      case 'active':
        await this.#deps.store.setStatusMessage(ref, `Running in queue '${tool.queue.name}'`);
        return true;
      case 'completed':
        return await this.finish(ref, tool, completedResult(tool, event.returnvalue));
      case 'failed':
        return await this.finish(ref, tool, failedResult(event.failedReason));
      case 'other':
        return false;
      case 'removed':
        return await this.finish(
          ref,
          tool,
          failedResult(`The job was removed from queue '${tool.queue.name}' before it finished`),
        );
    }
  }

  /** Cancels the working task `taskId` of `tool` on the broker's behalf (its job was revoked where it runs). */
  async cancel(taskId: string, tool: AnyBridgedToolConfig, statusMessage: string): Promise<boolean> {
    const task = await this.#task(taskId, new Map([[tool.name, tool]]));
    if (task === undefined) return false;
    const ended = await this.#deps.store.cancelAsBroker(task.ref, statusMessage);
    if (!ended.ok) return false;
    this.#deps.metrics.applied.inc({ tool: tool.name, outcome: 'cancelled' });
    const { ownerId: owner } = task.ref;
    this.#deps.logger.info(
      { audit: 'task.cancelled', status: 'cancelled', owner, taskId, tool: tool.name },
      'task cancelled',
    );
    return true;
  }

  /** Which of `taskIds` are cancelled tasks of one of `tools` (their jobs need not run). */
  async cancelledOf(taskIds: readonly string[], tools: ReadonlyMap<string, BridgedToolConfig>): Promise<string[]> {
    const statuses = await this.#deps.store.statuses(taskIds);
    const cancelled = taskIds.filter((_id, i) => statuses[i] === 'cancelled');
    const tasks = await Promise.all(cancelled.map((id) => this.#deps.store.read(id)));
    return cancelled.filter((_id, i) => {
      const tool = tasks[i]?.tool;
      return tool !== undefined && tools.has(tool);
    });
  }

  /** Finishes the working task `taskId` of `tool` with an outcome read from its job's state. */
  async reconcile(taskId: string, tool: AnyBridgedToolConfig, result: CallToolResult): Promise<boolean> {
    const task = await this.#task(taskId, new Map([[tool.name, tool]]));
    return task !== undefined && (await this.finish(task.ref, tool, result));
  }

  /** Finishes the task with the job's mapped outcome; false when it had ended already. */
  async finish(ref: TaskRef, tool: { readonly name: string }, result: CallToolResult): Promise<boolean> {
    const failed = result.isError === true;
    const statusMessage = failed ? `Tool failed: ${firstText(result) ?? 'the job failed'}` : undefined;
    const ended = await this.#deps.store.finish(ref, { result }, statusMessage);
    if (!ended.ok) return false;
    this.#deps.metrics.applied.inc({ tool: tool.name, outcome: failed ? 'failed' : 'completed' });
    const { status, kind } = ended.task;
    this.#deps.logger.info(
      { audit: `task.${status}`, status, kind, owner: ref.ownerId, taskId: ref.taskId, tool: tool.name },
      `task ${status}`,
    );
    return true;
  }
}
