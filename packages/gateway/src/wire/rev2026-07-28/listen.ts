import { randomBytes } from 'node:crypto';
import type { CatalogKind, TaskWaiter } from '@taskgate/core';
import { META_SUBSCRIPTION_ID, type RequestId } from '@taskgate/protocol';
import { visibleTask } from '../../methods/caller-task.js';
import type { AnswerChannel } from '../codec.js';
import { declaresTasks, type Rev2026Context } from './context.js';
import { detailedView } from './task-view.js';

/** The list-changed news a `subscriptions/listen` filter may ask for, and the catalog kind behind each. */
const FILTERS: readonly { readonly flag: string; readonly kind: CatalogKind; readonly method: string }[] = [
  { flag: 'toolsListChanged', kind: 'tools', method: 'notifications/tools/list_changed' },
  { flag: 'promptsListChanged', kind: 'prompts', method: 'notifications/prompts/list_changed' },
  { flag: 'resourcesListChanged', kind: 'resources', method: 'notifications/resources/list_changed' },
];

/** Most resource URIs and task ids one listen stream may follow. */
const MAX_FOLLOWED = 100;
/** How long a listen stream's interest in its resources lasts unless renewed (ms); renewed at a third of it. */
const INTEREST_TTL_MS = 30_000;

const strings = (value: unknown): string[] =>
  Array.isArray(value)
    ? [...new Set(value.filter((item): item is string => typeof item === 'string'))].slice(0, MAX_FOLLOWED)
    : [];

/**
 * `subscriptions/listen`: a long-lived SSE stream that first acknowledges the part of its filter it honours,
 * then relays what the filter asked for and only that, each message tagged with the subscription's id (the
 * request's JSON-RPC id): list-changed news, `notifications/resources/updated` for `resourceSubscriptions`, and
 * with the tasks extension `notifications/tasks` (the task as `tasks/get` shows it) for `taskIds` the caller may
 * see, first as each task is when the stream opens, then at every change. All of it reaches every gateway
 * through Redis pub/sub, so the stream may be on any pod. It ends when the client goes away or the gateway
 * drains.
 */
export async function listen(
  ctx: Rev2026Context,
  channel: AnswerChannel,
  id: RequestId,
  params: Record<string, unknown>,
): Promise<void> {
  const { services } = ctx;
  const asked = (
    typeof params.notifications === 'object' && params.notifications !== null ? params.notifications : {}
  ) as Record<string, unknown>;
  const honoured = FILTERS.filter((filter) => asked[filter.flag] === true);
  const uris = new Set(strings(asked.resourceSubscriptions));
  const candidates = declaresTasks(ctx) ? strings(asked.taskIds) : [];
  const tasks = (await Promise.all(candidates.map((taskId) => visibleTask(ctx, taskId)))).filter(
    (task) => task !== undefined,
  );
  const meta = { [META_SUBSCRIPTION_ID]: id };
  const stream = channel.openStream();
  const notify = (method: string, fields: Record<string, unknown> = {}): void => {
    stream.send({ jsonrpc: '2.0', method, params: { ...fields, _meta: meta } });
  };
  // One read after the other, so a stream never shows a task's older state after a newer one; a read that
  // finds the task as the last one sent (the follower's first read, a reconnect) sends nothing.
  let news = Promise.resolve();
  const sent = new Map<string, string>();
  const taskNews = (taskId: string): void => {
    news = news
      .then(async () => {
        const task = await services.tasks.read(taskId);
        if (task === undefined || !stream.isOpen) return;
        const { resultType: _complete, ...view } = await detailedView(services, task);
        const shown = JSON.stringify(view);
        if (sent.get(taskId) === shown) return;
        sent.set(taskId, shown);
        notify('notifications/tasks', view);
      })
      .catch(() => {});
  };
  // The tasks are followed through the process's task follower (one subscription per task, however many wait).
  const followed = tasks.map((task) => new ListenedTask(task.taskId, taskNews));
  for (const task of followed) services.follower.follow(task.taskId, task);
  const unsubscribes = await Promise.all([
    ...honoured.map((filter) => services.bus.onCatalogChange(filter.kind, () => notify(filter.method))),
    ...(uris.size === 0
      ? []
      : [services.bus.onResourceUpdated((uri) => uris.has(uri) && notify('notifications/resources/updated', { uri }))]),
  ]);
  const stopInterest = await holdInterest(ctx, uris);
  const acknowledged: Record<string, unknown> = Object.fromEntries(honoured.map((filter) => [filter.flag, true]));
  if (uris.size > 0) acknowledged.resourceSubscriptions = [...uris];
  if (tasks.length > 0) acknowledged.taskIds = tasks.map((task) => task.taskId);
  stream.send({
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: meta, notifications: acknowledged },
  });
  // Then each followed task as it is now: what changed before the stream opened is not lost to the client. The
  // follower's news of a task count from here on (its first read, a change); the read below is after them.
  for (const task of followed) task.acknowledged();
  for (const task of tasks) taskNews(task.taskId);
  if (stream.isOpen) await new Promise<void>((resolve) => stream.signal.addEventListener('abort', () => resolve()));
  for (const task of followed) services.follower.unfollow(task.taskId, task);
  await Promise.all([...unsubscribes, stopInterest].map((unsubscribe) => unsubscribe().catch(() => {})));
}

/**
 * One task a listen stream follows: every change the follower tells of (its status or status message, its end,
 * or "read again" after the subscriber reconnected) is read and sent, once the stream acknowledged its filter.
 */
class ListenedTask implements TaskWaiter {
  #acknowledged = false;

  constructor(
    readonly taskId: string,
    private readonly news: (taskId: string) => void,
  ) {}

  acknowledged(): void {
    this.#acknowledged = true;
  }

  taskChanged(): void {
    if (this.#acknowledged) this.news(this.taskId);
  }

  taskEnded(): void {
    if (this.#acknowledged) this.news(this.taskId);
  }
}

/**
 * Tells the bridges which of the stream's resources someone listens to (those the caller may read), so that
 * an upstream server's resource is subscribed upstream while the stream is open. Resolves with its end.
 */
async function holdInterest(ctx: Rev2026Context, uris: ReadonlySet<string>): Promise<() => Promise<void>> {
  const { subscriptions, offerings } = ctx.services;
  const readable = await Promise.all(
    [...uris].map(async (uri) => ((await offerings.resolve(uri, ctx.principal)) === undefined ? [] : [uri])),
  );
  const held = readable.flat();
  if (held.length === 0) return async () => {};
  const listener = `listen.${randomBytes(12).toString('base64url')}`;
  const renew = () => Promise.all(held.map((uri) => subscriptions.listen(listener, uri, INTEREST_TTL_MS)));
  await renew();
  const timer = setInterval(() => void renew().catch(() => {}), INTEREST_TTL_MS / 3);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await Promise.all(held.map((uri) => subscriptions.unlisten(listener, uri)));
  };
}
