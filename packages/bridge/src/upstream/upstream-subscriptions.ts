import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, type Logger, type ResourceInterest, UriTemplate } from '@taskgate/core';
import type { UpstreamPool } from './upstream-pool.js';
import type { UpstreamReads } from './upstream-reads.js';
import { REV_2025_11_25, type UpstreamClient } from './upstream-session.js';

/** How often the subscriptions of the clients are compared with those held upstream (ms). */
const SYNC_MS = 1000;

export interface UpstreamSubscriptionsOptions {
  readonly name: string;
  readonly pool: UpstreamPool;
  readonly interest: ResourceInterest;
  /** Announces a resource update to the gateways (the worker's `resourceUpdated`). */
  readonly announce: (uri: string) => Promise<void>;
  readonly logger: Logger;
}

/**
 * The upstream's side of `resources/subscribe`: while some client session is subscribed to a resource the server
 * publishes, the bridge is subscribed to it upstream (on the session it lists with) and relays the server's
 * `notifications/resources/updated` to the gateways; once nobody is, it unsubscribes. A new upstream session
 * (a restarted process) is subscribed again.
 */
export class UpstreamSubscriptions {
  readonly #options: UpstreamSubscriptionsOptions;
  readonly #held = new Set<string>();
  #uris = new Set<string>();
  #templates: UriTemplate[] = [];
  #session: UpstreamClient | undefined;
  #timer: NodeJS.Timeout | undefined;
  #syncing = false;

  constructor(options: UpstreamSubscriptionsOptions) {
    this.#options = options;
  }

  /** What the server publishes now: the URIs a subscription may name. */
  offer(reads: UpstreamReads): void {
    this.#uris = new Set(reads.resources.map((resource) => resource.uri));
    this.#templates = reads.templates.flatMap((template) => {
      try {
        return [new UriTemplate(template.uriTemplate)];
      } catch {
        return [];
      }
    });
  }

  start(): void {
    this.#timer = setInterval(() => void this.sync(), SYNC_MS);
    this.#timer.unref();
  }

  /** Subscribes upstream to what clients newly listen to, and unsubscribes from what nobody does any more. */
  async sync(): Promise<void> {
    if (this.#syncing) return;
    this.#syncing = true;
    try {
      const control = this.#options.pool.control;
      if (control !== this.#session) this.#follow(control);
      // 2026-07-28 has no resources/subscribe (its subscriptions/listen is not followed yet).
      const session = control?.revision === REV_2025_11_25 ? control.sdkV1 : undefined;
      if (session === undefined || session.getServerCapabilities()?.resources?.subscribe !== true) return;
      const wanted = [...(await this.#options.interest.uris())].filter((uri) => this.#offers(uri));
      const added = wanted.filter((uri) => !this.#held.has(uri));
      const dropped = [...this.#held].filter((uri) => !wanted.includes(uri));
      for (const uri of added) {
        await session.subscribeResource({ uri });
        this.#held.add(uri);
      }
      for (const uri of dropped) {
        this.#held.delete(uri);
        await session.unsubscribeResource({ uri });
      }
      // Counts only: a URI may say more than an operator's log should.
      if (added.length + dropped.length > 0) {
        this.#options.logger.info(
          { server: this.#options.name, held: this.#held.size },
          'upstream resource subscriptions updated',
        );
      }
    } catch (error) {
      this.#options.logger.warn(
        { server: this.#options.name, err: errorMessage(error) },
        'upstream resource subscriptions could not be updated',
      );
    } finally {
      this.#syncing = false;
    }
  }

  /** Stops following the clients' subscriptions (the server's process stops with the bridge). */
  close(): void {
    clearInterval(this.#timer);
  }

  /** A new upstream session holds none of the subscriptions yet; its updates are relayed from now on. */
  #follow(session: UpstreamClient | undefined): void {
    this.#session = session;
    this.#held.clear();
    if (session?.revision !== REV_2025_11_25) return;
    session.sdkV1.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => {
      const { uri } = notification.params;
      if (!this.#held.has(uri)) return;
      await this.#options
        .announce(uri)
        .catch((error: unknown) =>
          this.#options.logger.warn({ server: this.#options.name, err: errorMessage(error) }, 'update not relayed'),
        );
    });
  }

  #offers(uri: string): boolean {
    return this.#uris.has(uri) || this.#templates.some((template) => template.match(uri) !== undefined);
  }
}
