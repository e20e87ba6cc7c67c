/**
 * What a part of a stream (a task's outbox carrier) does at the stream's heartbeats and end: one object
 * attached per stream instead of a closure per hook, which thousands of waiting streams would each hold.
 */
export interface StreamPart {
  /**
   * Extends the connection lease along with a lease of its own in one script: resolves to whether this
   * connection still holds the stream, or undefined when it did not extend the lease this time.
   */
  refreshConnection(): Promise<boolean | undefined>;
  /** Runs at every heartbeat while the connection is open; must not reject. */
  heartbeat(): Promise<unknown>;
  /** Runs when the connection ends, before the hooks of `onClose` and before the connection lease is given up. */
  close(): Promise<unknown>;
}
