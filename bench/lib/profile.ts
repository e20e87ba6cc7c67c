import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Node flags that make process `name` write its CPU profile into `<dir>/<name>/` when it exits (the layout
 * `profilesIn` reads); none without a `dir` (no `--profile`).
 */
export function profileFlags(dir: string | undefined, name: string): string[] {
  return dir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}/${name}`];
}

/** The parts of a V8 `.cpuprofile` (what `node --cpu-prof` writes) that self time needs. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
    };
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** One function's self time in a profile. */
export interface SelfTime {
  /** `name (file:line)`, the file relative to the repository (or `node:…`, or the package under node_modules). */
  readonly fn: string;
  readonly ms: number;
  /** Share of the profile's busy time (samples not in `(idle)`). */
  readonly share: number;
}

const shortUrl = (url: string, root: string): string => {
  const path = url.replace(/^file:\/\//, '');
  const inModules = path.lastIndexOf('/node_modules/');
  if (inModules >= 0) return path.slice(inModules + '/node_modules/'.length);
  return path.startsWith(root) ? path.slice(root.length) : path;
};

/**
 * The `top` functions by self time in one profile: each sample's time delta goes to the node it hit,
 * summed per function name + file + line (V8 lines are 0-based; printed 1-based); idle time left out.
 */
export function topSelfTime(file: string, root: string, top = 10): SelfTime[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byNode = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    byNode.set(id, (byNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const time = byNode.get(node.id);
    if (time === undefined || node.callFrame.functionName === '(idle)') continue;
    total += time;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url === '' ? '' : ` (${shortUrl(url, root)}:${lineNumber + 1})`;
    const key = `${functionName === '' ? '(anonymous)' : functionName}${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + time);
  }
  return [...byFunction.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([fn, micros]) => ({ fn, ms: micros / 1000, share: total === 0 ? 0 : micros / total }));
}

/**
 * The main-thread profiles under `dir`, one folder per process (`<dir>/<process name>/*.cpuprofile`): Node
 * names them `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`, thread 0 the main one (the others are
 * tsx's module-loader thread, busy only at start).
 */
export function profilesIn(dir: string): { process: string; file: string }[] {
  const found: { process: string; file: string }[] = [];
  for (const name of readdirSync(dir).sort()) {
    let files: string[];
    try {
      files = readdirSync(join(dir, name)).filter((file) => /\.\d+\.0\.\d+\.cpuprofile$/.test(file));
    } catch {
      continue;
    }
    for (const file of files) found.push({ process: name, file: join(dir, name, file) });
  }
  return found;
}

/** A Markdown table of one process's top self-time functions. */
export function renderTop(process: string, top: readonly SelfTime[]): string {
  const lines = [
    `| ${process}: function (file:line) | self (ms) | share |`,
    '| --- | --- | --- |',
    ...top.map(
      (entry) => `| ${entry.fn.replace(/\|/g, '\\|')} | ${entry.ms.toFixed(0)} | ${(entry.share * 100).toFixed(1)} % |`,
    ),
  ];
  return lines.join('\n');
}
