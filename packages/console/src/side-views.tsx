import type { QueueStats, WorkerInfo } from './api.js';

/** Depth and waiting time of every tool queue. */
export function QueuesView({ queues }: { queues: QueueStats[] }) {
  return (
    <div>
      <h2>Queues</h2>
      <table id="queues">
        <thead>
          <tr>
            <th>Queue</th>
            <th>Shard</th>
            <th>Waiting</th>
            <th>Active</th>
            <th>Oldest wait</th>
          </tr>
        </thead>
        <tbody>
          {queues.map((queue) => (
            <tr key={queue.queue}>
              <td>{queue.queue}</td>
              <td>{queue.shard === undefined ? '—' : `${queue.shard.index + 1} of ${queue.shard.of}`}</td>
              <td>{queue.waiting}</td>
              <td>{queue.active}</td>
              <td>{(queue.oldestWaitingMs / 1000).toFixed(1)} s</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Workers whose heartbeat is alive, with their tools. */
export function WorkersView({ workers }: { workers: WorkerInfo[] }) {
  return (
    <div>
      <h2>Workers</h2>
      <ul id="workers">
        {workers.map((worker) => (
          <li key={worker.id}>
            <b>{worker.pod}</b> <span class="tools">{worker.tools.join(', ')}</span>
          </li>
        ))}
      </ul>
      {workers.length === 0 && <p class="empty">No live workers.</p>}
    </div>
  );
}
