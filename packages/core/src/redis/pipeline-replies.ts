/** A pipeline's replies as ioredis gives them: an error or a value per command; null when it was discarded. */
type PipelineReplies = readonly [Error | null, unknown][] | null;

/**
 * The values of a pipeline's first `count` replies. A command that failed (a connection lost mid-pipeline,
 * Redis restarting, WRONGTYPE) throws its error, and so does a missing reply: a failed read is that failure,
 * never "nothing there", which a caller would take for an unknown session, an answered request or a
 * delivered message.
 */
export function pipelineValues(replies: PipelineReplies, count: number): unknown[] {
  const values = new Array<unknown>(count);
  for (let i = 0; i < count; i++) {
    const reply = replies?.[i];
    if (reply === undefined) throw new Error('A command of the pipeline got no reply');
    if (reply[0]) throw reply[0];
    values[i] = reply[1];
  }
  return values;
}
