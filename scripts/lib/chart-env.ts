/**
 * The environment the chart gives each container, for running the image outside Kubernetes
 * (scripts/lib/image-test.sh): from `helm template` output, every Deployment's and test Pod's container gets
 * `<component>.env` (podman's --env-file: its ConfigMaps' data, then its env with Secret references resolved,
 * as Kubernetes orders them), `<component>.cmd` (its command and args, NUL-separated) and `<component>.mounts`
 * (one `<dir>:<mountPath>:ro` a line for each ConfigMap volume it mounts, its files written in `<dir>`).
 * Run: node --import tsx scripts/lib/chart-env.ts <rendered manifests> <output directory>
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

interface KeyRef {
  readonly name: string;
  readonly key: string;
  readonly optional?: boolean;
}
interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: { readonly secretKeyRef?: KeyRef; readonly configMapKeyRef?: KeyRef };
}
interface Container {
  readonly name: string;
  readonly command?: string[];
  readonly args?: string[];
  readonly env?: EnvVar[];
  readonly envFrom?: { readonly configMapRef?: { name: string }; readonly secretRef?: { name: string } }[];
  readonly volumeMounts?: { readonly name: string; readonly mountPath: string }[];
}
interface PodSpec {
  readonly containers: Container[];
  readonly volumes?: { readonly name: string; readonly configMap?: { readonly name: string } }[];
}
interface Manifest {
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string> };
  readonly data?: Record<string, string>;
  readonly stringData?: Record<string, string>;
  readonly spec?: PodSpec & { readonly template?: { spec: PodSpec } };
}

const [rendered, out] = process.argv.slice(2);
if (rendered === undefined || out === undefined) throw new Error('usage: chart-env.ts <manifests> <output dir>');

const manifests = parseAllDocuments(readFileSync(rendered, 'utf8'))
  .map((doc) => doc.toJS() as Manifest | null)
  .filter((doc): doc is Manifest => doc !== null);
const data = (kind: string, name: string): Record<string, string> => {
  const found = manifests.find((doc) => doc.kind === kind && doc.metadata.name === name);
  if (found === undefined) throw new Error(`the rendered chart has no ${kind} ${name}`);
  if (kind === 'Secret' && found.data !== undefined) throw new Error(`Secret ${name}: expected stringData only`);
  return found.stringData ?? found.data ?? {};
};

function resolve(container: Container): Map<string, string> {
  const env = new Map<string, string>();
  for (const from of container.envFrom ?? []) {
    const source = from.configMapRef ? data('ConfigMap', from.configMapRef.name) : {};
    const secret = from.secretRef ? data('Secret', from.secretRef.name) : {};
    for (const [name, value] of Object.entries({ ...source, ...secret })) env.set(name, String(value));
  }
  for (const one of container.env ?? []) {
    const ref = one.valueFrom?.secretKeyRef ?? one.valueFrom?.configMapKeyRef;
    if (ref === undefined) {
      env.set(one.name, one.value ?? '');
      continue;
    }
    const value = data(one.valueFrom?.secretKeyRef ? 'Secret' : 'ConfigMap', ref.name)[ref.key];
    if (value !== undefined) env.set(one.name, String(value));
    else if (!ref.optional) throw new Error(`${container.name}: ${one.name} refers to ${ref.name}/${ref.key}, absent`);
  }
  return env;
}

for (const doc of manifests) {
  const pod = doc.kind === 'Pod' ? doc.spec : doc.spec?.template?.spec;
  const component = doc.metadata.labels?.['app.kubernetes.io/component'];
  if ((doc.kind !== 'Deployment' && doc.kind !== 'Pod') || pod === undefined || component === undefined) continue;
  const { containers } = pod;
  const [container] = containers;
  if (container === undefined || containers.length !== 1) throw new Error(`${doc.metadata.name}: one container`);
  const lines = [...resolve(container)].map(([name, value]) => {
    if (value.includes('\n')) throw new Error(`${container.name}: ${name} spans lines (not for an env file)`);
    return `${name}=${value}\n`;
  });
  writeFileSync(join(out, `${component}.env`), lines.join(''));
  writeFileSync(join(out, `${component}.cmd`), [...(container.command ?? []), ...(container.args ?? [])].join('\0'));
  const mounts: string[] = [];
  for (const mount of container.volumeMounts ?? []) {
    const map = pod.volumes?.find((volume) => volume.name === mount.name)?.configMap;
    if (map === undefined) continue;
    const dir = join(out, `${component}-${mount.name}`);
    mkdirSync(dir, { recursive: true });
    for (const [file, text] of Object.entries(data('ConfigMap', map.name))) writeFileSync(join(dir, file), text);
    mounts.push(`${dir}:${mount.mountPath}:ro\n`);
  }
  writeFileSync(join(out, `${component}.mounts`), mounts.join(''));
}
