import { errorMessage, type Logger } from '@taskgate/core';
import { connectUpstream } from './connect-upstream.js';
import type { UpstreamServerConfig } from './server-config.js';
import type { UpstreamMetrics } from './upstream-metrics.js';
import type { UpstreamClient, Verdict } from './upstream-session.js';

/** First and longest wait before starting or reaching an upstream again (ms). */
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 30_000;
/** A session that lasted this long resets the backoff (ms). */
const STABLE_MS = 10_000;

/** A call could not reach the upstream: it is down or did not come back in time. */
export class UpstreamUnavailableError extends Error {}

export interface PoolOptions {
  readonly logger: Logger;
  readonly metrics: UpstreamMetrics;
  /** Told when a session comes up and when the upstream announces a changed tool list. */
  readonly onToolsChanged: () => void;
  /** How often an HTTP upstream's session is checked with a ping (ms). */
  readonly pingMs?: number;
}

/** A session lent to one call; `release` gives it back (HTTP: ends the call's own session unless `keep`). */
export interface Lease {
  readonly session: UpstreamClient;
  release(keep?: boolean): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * The sessions of one upstream server. A stdio server runs `processes` processes, started with the bridge
 * and started again with backoff when they exit; calls share them, the least busy first. An HTTP server has
 * one long-lived session (the catalog and its list_changed news), checked by ping and reopened with backoff,
 * and each call opens a session of its own: what the upstream asks during a call then reaches that call's
 * client only, and a bridge that takes over the call after a crash can resume that session.
 */
export class UpstreamPool {
  readonly server: UpstreamServerConfig;
  readonly #options: PoolOptions;
  readonly #slots: (UpstreamClient | undefined)[];
  readonly #waiters = new Set<() => void>();
  #closed = false;
  #loops: Promise<void>[] = [];
  /** The revision the server spoke when first reached: later sessions start on it without a probe. */
  #verdict: Verdict | undefined;

  constructor(server: UpstreamServerConfig, options: PoolOptions) {
    this.server = server;
    this.#options = options;
    this.#slots = new Array(server.stdio !== undefined ? server.processes : 1).fill(undefined);
    options.metrics.up.set({ server: server.name }, 0);
  }

  /** Whether a session is up now. */
  get up(): boolean {
    return this.#slots.some((slot) => slot !== undefined);
  }

  /** A session that is up, for listing (the first), or undefined. */
  get control(): UpstreamClient | undefined {
    return this.#slots.find((slot) => slot !== undefined);
  }

  /** Starts the processes (or the HTTP session) and keeps them running until `close`. */
  start(): void {
    this.#loops = this.#slots.map((_slot, index) => this.#keep(index));
  }

  #changed(): void {
    this.#options.metrics.up.set({ server: this.server.name }, this.up ? 1 : 0);
    for (const wake of this.#waiters) wake();
  }

  async #keep(index: number): Promise<void> {
    const { logger } = this.#options;
    const name = this.server.name;
    let backoff = BACKOFF_MIN_MS;
    while (!this.#closed) {
      const since = Date.now();
      try {
        const session = await connectUpstream(this.server, {
          logger,
          onToolsChanged: () => this.#options.onToolsChanged(),
          ...(this.#verdict !== undefined && { verdict: this.#verdict }),
        });
        if (this.#closed) {
          await session.close();
          break;
        }
        this.#verdict = session.verdict;
        this.#slots[index] = session;
        const pid = session.pid !== undefined ? { upstreamPid: session.pid } : {};
        logger.info({ server: name, ...pid, protocolVersion: session.revision }, 'upstream up');
        this.#changed();
        this.#options.onToolsChanged();
        await (this.server.http !== undefined ? this.#pingUntilDown(session) : session.closed);
        this.#slots[index] = undefined;
        this.#changed();
        if (this.#closed) break;
        logger.warn({ server: name }, this.server.stdio !== undefined ? 'upstream process exited' : 'upstream down');
        await session.close().catch(() => {});
      } catch (error) {
        if (this.#closed) break;
        logger.warn({ server: name, err: errorMessage(error) }, 'upstream could not be reached');
      }
      if (Date.now() - since >= STABLE_MS) backoff = BACKOFF_MIN_MS;
      await sleep(backoff);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  /** Resolves once the HTTP session stops answering pings (or the pool closes). */
  async #pingUntilDown(session: UpstreamClient): Promise<void> {
    const every = this.#options.pingMs ?? 2000;
    while (!this.#closed) {
      await Promise.race([sleep(every), session.closed]);
      if (this.#closed) return;
      try {
        await session.client.ping({ timeout: every });
      } catch {
        return;
      }
    }
  }

  /** Waits up to `waitMs` for a session to be up; false if none came. */
  async #upWithin(waitMs: number): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    while (!this.up && !this.#closed) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        const wake = (): void => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          resolve();
        };
        this.#waiters.add(wake);
      });
    }
    return this.up;
  }

  /**
   * A session for one call: the least busy process of a stdio server, or a new session of an HTTP server
   * (`sessionId`: resume that one). Throws UpstreamUnavailableError when the server is not up within `waitMs`.
   */
  async acquire(waitMs: number, sessionId?: string): Promise<Lease> {
    if (!(await this.#upWithin(waitMs))) {
      throw new UpstreamUnavailableError(`The upstream MCP server '${this.server.name}' is not available`);
    }
    if (this.server.stdio !== undefined) {
      const session = this.#slots
        .filter((slot): slot is UpstreamClient => slot !== undefined)
        .sort((a, b) => a.routes.size - b.routes.size)[0] as UpstreamClient;
      return { session, release: async () => {} };
    }
    let session: UpstreamClient;
    try {
      session = await connectUpstream(this.server, {
        logger: this.#options.logger,
        ...(sessionId !== undefined && { sessionId }),
        ...(this.#verdict !== undefined && { verdict: this.#verdict }),
      });
    } catch (error) {
      throw new UpstreamUnavailableError(
        `The upstream MCP server '${this.server.name}' could not be reached (${errorMessage(error)})`,
      );
    }
    return {
      session,
      release: async (keep = false) => {
        await (keep ? session.client.close() : session.close()).catch(() => {});
      },
    };
  }

  /** Stops the sessions (stdio: the processes). Calls in flight were drained before. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const wake of this.#waiters) wake();
    await Promise.all(this.#slots.map((slot) => slot?.close().catch(() => {})));
    await Promise.all(this.#loops);
    this.#options.metrics.up.set({ server: this.server.name }, 0);
  }
}
