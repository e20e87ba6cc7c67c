import {
  type EventLog,
  errorMessage,
  type GatewayRegistry,
  type HeldStream,
  type Logger,
  type TaskDelivery,
} from '@taskgate/core';
import type { LoggedStream } from './logged-stream.js';
import type { StreamRegistry } from './stream-registry.js';

export interface HeldStreamsOptions {
  readonly registry: GatewayRegistry;
  readonly events: EventLog;
  readonly delivery: TaskDelivery;
  readonly streams: StreamRegistry;
  /** How often this process beats, and looks for dead ones (ms): the SSE heartbeat. */
  readonly beatMs: number;
  /** A process that has not beaten for this long is dead (ms): three beats, as a stream lease. */
  readonly deadAfterMs: number;
  /** The SSE `retry` hint of the streams this process ends when it finds itself declared dead. */
  readonly retryMs: number;
  readonly logger: Logger;
}

/**
 * The leases of this gateway's tasks/result and direct-call streams, held per process rather than per stream.
 * Such a stream's connection and carrier leases last `heldLeaseMs` (an hour) and are renewed every twenty
 * minutes; what keeps them honest is the process: it beats once per heartbeat, and when one stops beating
 * for `deadAfterMs`, the first process to notice releases every stream it had recorded (`GatewayRegistry`) —
 * connection lease, carrier lease, which hands a live task's outbox to its session's GET stream — as the
 * stream's own end would have. A process that finds it was declared dead (a long pause, Redis away) ends its
 * task streams with a retry hint: the clients resume them, on any pod.
 */
export class HeldStreams {
  readonly #o: HeldStreamsOptions;
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #started: Promise<void> = Promise.resolve();
  /** When this process last beat (ms; 0: not yet). */
  #lastBeat = 0;

  constructor(options: HeldStreamsOptions) {
    this.#o = options;
  }

  /**
   * Beats now, then once per `beatMs`, from the first task stream on (a gateway that never holds one writes
   * nothing); resolves after the first beat.
   */
  start(): Promise<void> {
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => void this.tick(), this.#o.beatMs);
      this.#timer.unref();
      this.#started = this.tick();
    }
    return this.#started;
  }

  /** Records a stream before it takes its leases (this process beats from then on, so others can judge it). */
  async hold(stream: HeldStream): Promise<void> {
    await this.start();
    await this.#o.registry.hold(stream);
  }

  /** Forgets a stream once its connection ended and gave its leases up. */
  dropWhenClosed(held: HeldStream, stream: LoggedStream): void {
    stream.afterClose(() => void this.#o.registry.drop(held).catch(() => {}));
  }

  /** One beat, and the release of every dead process's streams. Never rejects. */
  tick(): Promise<void> {
    this.#beating ??= this.#tick().finally(() => {
      this.#beating = undefined;
    });
    return this.#beating;
  }

  /** Stops beating and forgets this process (after its streams gave their leases up). */
  async stop(): Promise<void> {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    await this.#beating;
    await this.#o.registry.forget(this.#o.registry.gatewayId).catch(() => {});
  }

  async #tick(): Promise<void> {
    const { registry, logger } = this.#o;
    try {
      const now = Date.now();
      if (!(await registry.beat(now))) {
        logger.warn({}, 'this gateway was taken for dead and its streams released: its task streams end');
        this.#o.streams.endAll(['result', 'direct'], this.#o.retryMs);
      }
      // Only a process that beat on time just before judges the others: after Redis was away from all of
      // them, each gets one period to beat again before anyone takes it for dead.
      const onTime = this.#lastBeat > 0 && now - this.#lastBeat <= 2 * this.#o.beatMs;
      this.#lastBeat = now;
      if (!onTime) return;
      for (const gatewayId of await registry.dead(this.#o.deadAfterMs)) await this.#release(gatewayId);
    } catch (error) {
      logger.warn({ err: errorMessage(error) }, 'gateway beat failed');
    }
  }

  /** Releases a dead process's streams as their own end would have, then forgets the process. */
  async #release(gatewayId: string): Promise<void> {
    const { registry, delivery, events, logger } = this.#o;
    const streams = await registry.streamsOf(gatewayId);
    for (const { streamId, connectionId, taskId } of streams) {
      // Both fenced by the connection id: a stream resumed elsewhere since keeps its leases.
      await delivery.release(taskId, streamId, connectionId).catch(() => {});
      await events.releaseConnection(streamId, connectionId).catch(() => {});
    }
    await registry.forget(gatewayId);
    logger.info({ gateway: gatewayId, streams: streams.length }, 'released the streams of a gateway gone silent');
  }
}
