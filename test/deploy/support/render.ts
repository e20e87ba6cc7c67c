/**
 * Renders the Helm chart (helm/taskgate) for the deployment tests: the pinned helm binary (installed under the
 * ignored .tools/ by scripts/lib/tools.sh when missing) and `helm template` parsed into objects.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);

/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** The chart's directory. */
export const chartDir = `${repoRoot}helm/taskgate`;

let helm: Promise<string> | undefined;

/** Path of the pinned helm binary; installs it (once, cached under .tools/bin) when missing. */
export function ensureHelm(): Promise<string> {
  helm ??= run('bash', ['-c', 'source scripts/lib/tools.sh && ensure_helm && echo "$TASKGATE_TOOLS_DIR/bin/helm"'], {
    cwd: repoRoot,
    maxBuffer: 16 * 1024 * 1024,
  }).then(({ stdout }) => stdout.trim().split('\n').at(-1) ?? '');
  return helm;
}

export interface RenderOptions {
  /** Values files, relative to the chart directory or absolute. */
  readonly valuesFiles?: readonly string[];
  /** `--set` pairs (helm's own syntax for the path and the value). */
  readonly set?: Readonly<Record<string, string>>;
  readonly releaseName?: string;
  readonly namespace?: string;
}

/** The `helm template` arguments of one render (shared by renderChart and the lint/render checks). */
export function templateArgs(options: RenderOptions = {}): string[] {
  const args = ['template', options.releaseName ?? 'taskgate', chartDir];
  args.push('--namespace', options.namespace ?? 'default');
  for (const file of options.valuesFiles ?? [])
    args.push('--values', file.startsWith('/') ? file : `${chartDir}/${file}`);
  for (const [path, value] of Object.entries(options.set ?? {})) args.push('--set', `${path}=${value}`);
  return args;
}

/** Runs helm with the given arguments; rejects with helm's stderr in the message. */
export async function runHelm(args: readonly string[]): Promise<string> {
  const bin = await ensureHelm();
  try {
    const { stdout } = await run(bin, [...args], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`helm ${args.join(' ')} failed: ${stderr.trim() || String(error)}`);
  }
}

/** `helm template` of the chart: every rendered object (empty documents dropped). */
// biome-ignore lint/suspicious/noExplicitAny: rendered Kubernetes objects have no single static type.
export async function renderChart(options: RenderOptions = {}): Promise<Array<Record<string, any>>> {
  const stdout = await runHelm(templateArgs(options));
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  const objects: Array<Record<string, any>> = [];
  for (const document of parseAllDocuments(stdout)) {
    if ('errors' in document && document.errors.length > 0)
      throw new Error(`helm rendered bad YAML: ${document.errors[0]?.message}`);
    const value: unknown = document.toJS();
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    if (value !== null && typeof value === 'object') objects.push(value as Record<string, any>);
  }
  return objects;
}
