import { useEffect, useState } from 'preact/hooks';
import { api, type TaskDetail } from './api.js';

export interface TimelineViewProps {
  taskId: string;
  /** Changes when a live update arrives: the timeline is read again. */
  version: number;
  onClose: () => void;
  onError: (cause: unknown) => void;
}

/** One task's timeline: created, attempts, progress, input requests, outcome, and the pods involved. */
export function TimelineView({ taskId, version, onClose, onError }: TimelineViewProps) {
  const [detail, setDetail] = useState<TaskDetail | undefined>();
  useEffect(() => {
    api.task(taskId).then(setDetail, onError);
  }, [taskId, version, onError]);
  if (detail === undefined) return <p>Loading {taskId}…</p>;
  const outcome = detail.outcome;
  return (
    <div id="timeline">
      <h2>
        Task <span class="mono">{taskId}</span>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </h2>
      <p>
        <span class={`status ${detail.task.status}`}>{detail.task.status}</span> {detail.task.statusMessage ?? ''}
        {outcome !== undefined &&
          ('error' in outcome
            ? ` — error ${outcome.error.code}: ${outcome.error.message}`
            : outcome.isError
              ? ' — tool error'
              : ' — result stored')}
      </p>
      <p>Pods: {detail.pods.join(', ') || '—'}</p>
      <ol>
        {detail.timeline.map((entry, i) => (
          <li key={`${entry.at}-${i}`} data-event={entry.event}>
            <time>{new Date(entry.at).toISOString().slice(11, 23)}</time> <b>{entry.event}</b> {entry.detail ?? ''}{' '}
            {entry.pod !== undefined && <span class="pod">on {entry.pod}</span>}
          </li>
        ))}
      </ol>
    </div>
  );
}
