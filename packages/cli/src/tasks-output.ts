import type { AdminTask, AdminTaskDetail, PurgeProgress } from '@taskgate/core';

function time(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}

/** Rows as aligned columns under a header, for people. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((name, i) => Math.max(name.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The task table of `taskgate tasks list`. */
export function tasksTable(tasks: readonly AdminTask[]): string {
  return table(
    ['TASK', 'STATUS', 'TOOL', 'OWNER', 'CREATED', 'UPDATED', 'MESSAGE'],
    tasks.map((task) => [
      task.taskId,
      task.status,
      task.tool ?? '-',
      task.owner.slice(0, 16),
      time(task.createdAt),
      time(task.lastUpdatedAt),
      task.statusMessage ?? '',
    ]),
  );
}

/** One task and its timeline, for `taskgate tasks get`. */
export function taskReport(detail: AdminTaskDetail): string {
  const { task } = detail;
  const outcome = detail.outcome;
  const lines = [
    `task      ${task.taskId}`,
    `status    ${task.status}${task.statusMessage === undefined ? '' : ` (${task.statusMessage})`}`,
    `tool      ${task.tool ?? '-'}`,
    `kind      ${task.kind}`,
    `owner     ${task.owner}`,
    `created   ${time(task.createdAt)}`,
    `expires   ${time(task.expiresAt)}`,
    `pods      ${detail.pods.join(', ') || '-'}`,
  ];
  if (outcome !== undefined) {
    lines.push(
      `outcome   ${'error' in outcome ? `error ${outcome.error.code}: ${outcome.error.message}` : outcome.isError ? 'tool error' : 'result'}`,
    );
  }
  lines.push(
    '',
    table(
      ['AT', 'EVENT', 'DETAIL', 'POD'],
      detail.timeline.map((e) => [time(e.at), e.event, e.detail ?? '', e.pod ?? '']),
    ),
  );
  return lines.join('\n');
}

/**
 * A progress bar on stderr while a purge runs, only when stderr is a terminal (scripts and logs get none).
 * Returns the function that draws a step and the one that ends the line.
 */
export function progressBar(stream: NodeJS.WriteStream = process.stderr): {
  update: (progress: PurgeProgress) => void;
  done: () => void;
} {
  if (!stream.isTTY) return { update: () => {}, done: () => {} };
  let drawn = false;
  return {
    update: ({ scanned, purged, total }) => {
      const width = 30;
      const share = total === 0 ? 1 : Math.min(1, scanned / total);
      const filled = Math.round(share * width);
      stream.write(
        `\rpurging [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round(share * 100)}% ${scanned}/${total} scanned, ${purged} purged`,
      );
      drawn = true;
    },
    done: () => {
      if (drawn) stream.write('\n');
    },
  };
}
