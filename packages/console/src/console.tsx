import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type AdminTask, ApiError, api, followEvents, type QueueStats, type WorkerInfo } from './api.js';
import { QueuesView, WorkersView } from './side-views.js';
import { TasksView } from './tasks-view.js';
import { TimelineView } from './timeline-view.js';

/** The signed-in console: tasks (with live updates), one task's timeline, queues and workers. */
export function Console({ onSignOut }: { onSignOut: () => void }) {
  const [status, setStatus] = useState('');
  const [tool, setTool] = useState('');
  const [tasks, setTasks] = useState<AdminTask[]>([]);
  const [queues, setQueues] = useState<QueueStats[]>([]);
  const [workers, setWorkers] = useState<WorkerInfo[]>([]);
  const [selected, setSelected] = useState<string | undefined>();
  const [live, setLive] = useState(false);
  const [error, setError] = useState('');
  const [version, setVersion] = useState(0);
  // Pages of the task scan shown (More adds one); whether the scan has more.
  const [pages, setPages] = useState(1);
  const [hasMore, setHasMore] = useState(false);
  const lastReload = useRef(0);

  const failed = useCallback(
    (cause: unknown) => {
      if (cause instanceof ApiError && cause.status === 401) onSignOut();
      else setError(cause instanceof Error ? cause.message : String(cause));
    },
    [onSignOut],
  );

  const reload = useCallback(async () => {
    lastReload.current = Date.now();
    try {
      const readTasks = async () => {
        const found = new Map<string, AdminTask>();
        let cursor: string | undefined;
        for (let page = 0; page < pages; page++) {
          const next = await api.tasks(status, tool, cursor);
          for (const task of next.tasks) found.set(task.taskId, task);
          cursor = next.nextCursor;
          if (cursor === undefined) break;
        }
        return { tasks: [...found.values()], more: cursor !== undefined };
      };
      const [page, q, w] = await Promise.all([readTasks(), api.queues(), api.workers()]);
      setTasks(page.tasks.sort((a, b) => b.createdAt - a.createdAt));
      setHasMore(page.more);
      setQueues(q.queues);
      setWorkers(w.workers);
      setError('');
    } catch (cause) {
      failed(cause);
    }
  }, [status, tool, pages, failed]);

  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), 5000);
    return () => clearInterval(timer);
  }, [reload]);

  useEffect(() => {
    const stop = new AbortController();
    void followEvents(
      (event) => {
        setTasks((current) => {
          const known = current.some((task) => task.taskId === event.taskId);
          if (!known) {
            // A task this page has not read yet: read again, at most once a second (the 5 s timer does the rest).
            if (Date.now() - lastReload.current > 1000) void reload();
            return current;
          }
          return current.map((task) =>
            task.taskId === event.taskId
              ? {
                  ...task,
                  status: event.status,
                  lastUpdatedAt: event.lastUpdatedAt,
                  ...(event.statusMessage !== undefined && { statusMessage: event.statusMessage }),
                }
              : task,
          );
        });
        setVersion((n) => n + 1);
      },
      setLive,
      stop.signal,
    );
    return () => stop.abort();
  }, [reload]);

  const cancel = async (taskId: string) => {
    try {
      await api.cancel(taskId);
      await reload();
    } catch (cause) {
      failed(cause);
    }
  };

  const openQueues = async () => {
    await api.openQueuesSession();
    window.open('/admin/queues/', '_blank', 'noopener');
  };

  return (
    <main>
      <header>
        <h1>taskgate console</h1>
        <span id="live" class={live ? 'live on' : 'live'}>
          {live ? 'live' : 'offline'}
        </span>
        <button type="button" onClick={openQueues}>
          Raw queues
        </button>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {error !== '' && <p class="error">{error}</p>}
      <div class="columns">
        <section class="main">
          <TasksView
            tasks={tasks}
            status={status}
            tool={tool}
            tools={[...new Set(queues.flatMap((queue) => queue.tools))].sort()}
            onStatus={setStatus}
            onTool={setTool}
            onSelect={setSelected}
            onCancel={cancel}
          />
          {hasMore && (
            <button type="button" id="more" onClick={() => setPages((n) => n + 1)}>
              More
            </button>
          )}
          {selected !== undefined && (
            <TimelineView taskId={selected} version={version} onClose={() => setSelected(undefined)} onError={failed} />
          )}
        </section>
        <aside>
          <QueuesView queues={queues} />
          <WorkersView workers={workers} />
        </aside>
      </div>
    </main>
  );
}
