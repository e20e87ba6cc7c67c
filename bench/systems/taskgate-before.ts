/**
 * `bash scripts/bench --before REF`: an earlier commit of taskgate measured in the same run as this checkout,
 * so the Performance pages can show its figures beside the new ones (same machine, same minute, same Redis).
 *
 * The commit's files are unpacked once into `.tools/bench-before/<sha>/` (an ignored folder, kept for the next
 * run). Its `node_modules` is a folder of links: the workspace packages point into the unpacked tree, every
 * other package into this checkout's `node_modules` — when both lockfiles are the same; otherwise `npm ci`
 * installs the commit's own. Its gateway and worker run from its sources, as this checkout's do.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import type { BenchConfig } from '../lib/config.js';
import type { ProcessSet } from '../lib/processes.js';
import { BEFORE } from '../lib/report-before.js';
import { startTaskgate, type TaskgateSystem } from './taskgate.js';

/** The commit an earlier taskgate was unpacked from, and where. */
export interface BeforeTree {
  readonly sha: string;
  /** Its root, ending in `/`, as the bench's own `root`. */
  readonly root: string;
}

const git = (root: string, args: readonly string[]): string =>
  execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();

/** `node_modules` of the unpacked tree: links to this checkout's packages, its own workspace packages. */
function linkModules(root: string, tree: string): void {
  const ours = join(root, 'node_modules');
  const theirs = join(tree, 'node_modules');
  mkdirSync(theirs);
  for (const entry of readdirSync(ours)) {
    if (entry === '@taskgate' || entry === '.cache') continue;
    symlinkSync(join(ours, entry), join(theirs, entry));
  }
  // The workspace links are relative (`../../packages/core`): the same text points into the unpacked tree.
  mkdirSync(join(theirs, '@taskgate'));
  for (const entry of readdirSync(join(ours, '@taskgate'))) {
    symlinkSync(readlinkSync(join(ours, '@taskgate', entry)), join(theirs, '@taskgate', entry));
  }
}

/** Unpacks `ref` (once per commit) and gives its tree; throws with a message when `ref` names no commit. */
export function prepareBefore(root: string, ref: string): BeforeTree {
  let sha: string;
  try {
    sha = git(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new Error(`--before: '${ref}' names no commit of this repository`);
  }
  const dir = join(root, '.tools', 'bench-before', sha);
  if (!existsSync(join(dir, 'node_modules'))) {
    // Unpacked beside and renamed into place: an interrupted run leaves no half tree behind.
    const partial = `${dir}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    execFileSync('sh', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'unpack', root, sha, partial]);
    const sameLock =
      readFileSync(join(root, 'package-lock.json'), 'utf8') ===
      readFileSync(join(partial, 'package-lock.json'), 'utf8');
    if (sameLock) linkModules(root, partial);
    else execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: partial, stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
    renameSync(partial, dir);
  }
  return { sha, root: `${dir}/` };
}

/** The earlier commit's gateway and worker on a private redis-server of their own, named `before`. */
export async function startBefore(
  config: BenchConfig,
  processes: ProcessSet,
  tree: BeforeTree,
): Promise<TaskgateSystem> {
  return await startTaskgate(config, processes, tree.root, BEFORE);
}
