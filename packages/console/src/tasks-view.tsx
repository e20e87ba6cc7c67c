import type { AdminTask } from './api.js';

const STATUSES = ['', 'working', 'input_required', 'completed', 'failed', 'cancelled'];

function age(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`;
}

export interface TasksViewProps {
  tasks: AdminTask[];
  status: string;
  tool: string;
  tools: string[];
  onStatus: (status: string) => void;
  onTool: (tool: string) => void;
  onSelect: (taskId: string) => void;
  onCancel: (taskId: string) => void;
}

/** Every owner's tasks, filtered by status and tool; a running one can be cancelled. */
export function TasksView(props: TasksViewProps) {
  return (
    <div>
      <div class="filters">
        <h2>Tasks</h2>
        <select
          id="status-filter"
          value={props.status}
          onChange={(e) => props.onStatus((e.target as HTMLSelectElement).value)}
        >
          {STATUSES.map((status) => (
            <option key={status} value={status}>
              {status === '' ? 'every status' : status}
            </option>
          ))}
        </select>
        <select
          id="tool-filter"
          value={props.tool}
          onChange={(e) => props.onTool((e.target as HTMLSelectElement).value)}
        >
          <option value="">every tool</option>
          {props.tools.map((tool) => (
            <option key={tool} value={tool}>
              {tool}
            </option>
          ))}
        </select>
      </div>
      <table id="tasks">
        <thead>
          <tr>
            <th>Task</th>
            <th>Tool</th>
            <th>Status</th>
            <th>Owner</th>
            <th>Created</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {props.tasks.map((task) => (
            <tr key={task.taskId} data-task={task.taskId} data-status={task.status}>
              <td>
                <button type="button" class="link" onClick={() => props.onSelect(task.taskId)}>
                  {task.taskId.slice(0, 12)}…
                </button>
              </td>
              <td>{task.tool ?? '—'}</td>
              <td>
                <span class={`status ${task.status}`}>{task.status}</span>
              </td>
              <td class="mono">{task.owner.slice(0, 12)}</td>
              <td>{age(task.createdAt)} ago</td>
              <td>
                {(task.status === 'working' || task.status === 'input_required') && (
                  <button type="button" class="cancel" onClick={() => props.onCancel(task.taskId)}>
                    Cancel
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.tasks.length === 0 && <p class="empty">No tasks.</p>}
    </div>
  );
}
