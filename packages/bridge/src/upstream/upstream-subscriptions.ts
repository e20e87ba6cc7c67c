import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, type Logger, type ResourceInterest, UriTemplate } from '@taskgate/core';
import type { UpstreamPool } from './upstream-pool.js';
import type { UpstreamReads } from './upstream-reads.js';
import {
  REV_2025_11_25,
  type Rev20251125Session,
  type Rev20260728Session,
  type UpstreamClient,
} from './upstream-session.js';

/** How often the subscriptions of the clients are compared with those held upstream (ms). */
const SYNC_MS = 1000;
/** How long a 2026-07-28 server may take to acknowledge a listen stream (ms). */
const ACK_TIMEOUT_MS = 10_000;

/** An open 2026-07-28 `subscriptions/listen` stream of the SDK v2 client. */
type ListenStream = Awaited<ReturnType<Rev20260728Session['sdkV2']['listen']>>;

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
 * publishes, the bridge is subscribed to it upstream (on the session it lists with: `resources/subscribe` on
 * 2025-11-25, a `subscriptions/listen` stream on 2026-07-28) and relays the server's
 * `notifications/resources/updated` to the gateways; once nobody is, it unsubscribes. A new upstream session
 * (a restarted process) is subscribed again.
 */
export class UpstreamSubscriptions {
  readonly #options: UpstreamSubscriptionsOptions;
  readonly #held = new Set<string>();
  #uris = new Set<string>();
  #templates: UriTemplate[] = [];
  #session: UpstreamClient | undefined;
  /** 2026-07-28: the listen stream that holds the subscriptions, and the URIs it asked for. */
  #stream: ListenStream | undefined;
  #asked: string[] = [];
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
      if (control !== this.#session) await this.#follow(control);
      if (control === undefined) return;
      const subscribes =
        control.revision === REV_2025_11_25
          ? control.sdkV1.getServerCapabilities()?.resources?.subscribe === true
          : control.listens;
      if (!subscribes) return;
      const wanted = [...(await this.#options.interest.uris())].filter((uri) => this.#offers(uri)).sort();
      const before = this.#held.size;
      const changed =
        control.revision === REV_2025_11_25
          ? await this.#subscribe(control.sdkV1, wanted)
          : await this.#listen(control.sdkV2, wanted);
      // Counts only: a URI may say more than an operator's log should.
      if (changed || this.#held.size !== before) {
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
    void this.#stream?.close().catch(() => {});
  }

  /** 2025-11-25: `resources/subscribe` and `resources/unsubscribe` of what changed. */
  async #subscribe(session: Rev20251125Session['sdkV1'], wanted: readonly string[]): Promise<boolean> {
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
    return added.length + dropped.length > 0;
  }

  /**
   * 2026-07-28: one `subscriptions/listen` stream with the wanted URIs as its `resourceSubscriptions`; when they
   * change, a stream with the new ones opens before the old one closes, so no update falls between them. A
   * stream the server ended is opened again.
   */
  async #listen(client: Rev20260728Session['sdkV2'], wanted: readonly string[]): Promise<boolean> {
    if (this.#stream !== undefined && wanted.join('\n') === this.#asked.join('\n')) return false;
    const old = this.#stream;
    this.#stream = undefined;
    this.#asked = [...wanted];
    try {
      if (wanted.length > 0) {
        const stream = await client.listen({ resourceSubscriptions: [...wanted] }, { timeout: ACK_TIMEOUT_MS });
        this.#stream = stream;
        this.#held.clear();
        for (const uri of stream.honoredFilter.resourceSubscriptions ?? []) this.#held.add(uri);
        void stream.closed.then((cause) => {
          if (this.#stream !== stream) return;
          this.#stream = undefined;
          this.#options.logger.info({ server: this.#options.name, cause }, 'upstream listen stream ended');
        });
      } else {
        this.#held.clear();
      }
    } catch (error) {
      this.#held.clear();
      throw error;
    } finally {
      await old?.close().catch(() => {});
    }
    return old !== undefined || wanted.length > 0;
  }

  /** A new upstream session holds none of the subscriptions yet; its updates are relayed from now on. */
  async #follow(session: UpstreamClient | undefined): Promise<void> {
    this.#session = session;
    this.#held.clear();
    const old = this.#stream;
    this.#stream = undefined;
    this.#asked = [];
    await old?.close().catch(() => {});
    const relay = async (uri: string): Promise<void> => {
      if (!this.#held.has(uri)) return;
      await this.#options
        .announce(uri)
        .catch((error: unknown) =>
          this.#options.logger.warn({ server: this.#options.name, err: errorMessage(error) }, 'update not relayed'),
        );
    };
    if (session?.revision === REV_2025_11_25) {
      session.sdkV1.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) =>
        relay(notification.params.uri),
      );
    } else if (session !== undefined) {
      session.sdkV2.setNotificationHandler('notifications/resources/updated', (notification) =>
        relay(notification.params.uri),
      );
    }
  }

  #offers(uri: string): boolean {
    return this.#uris.has(uri) || this.#templates.some((template) => template.match(uri) !== undefined);
  }
}
