import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { chartDir, renderChart, repoRoot } from './support/render.js';

const run = promisify(execFile);
// biome-ignore lint/suspicious/noExplicitAny: rendered Kubernetes objects and CRD schemas have no static type.
type K8sObject = Record<string, any>;

const VALUES_FILES = readdirSync(`${chartDir}/ci`)
  .filter((name) => name.endsWith('-values.yaml'))
  .sort()
  .map((name) => `ci/${name}`);
const KUBERNETES_VERSIONS = ['1.31.0', '1.35.0'];
/** The CRD files of the custom kinds the chart renders, in their upstream Go modules. */
const CRD_FILES: Record<string, string> = {
  ServiceMonitor: 'example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml',
  PodMonitor: 'example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml',
  PrometheusRule: 'example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml',
  ScaledObject: 'config/crd/bases/keda.sh_scaledobjects.yaml',
  TriggerAuthentication: 'config/crd/bases/keda.sh_triggerauthentications.yaml',
  HTTPRoute: 'config/crd/standard/gateway.networking.k8s.io_httproutes.yaml',
};
const MODULE_OF: Record<string, string> = {
  ServiceMonitor: 'github.com/prometheus-operator/prometheus-operator',
  PodMonitor: 'github.com/prometheus-operator/prometheus-operator',
  PrometheusRule: 'github.com/prometheus-operator/prometheus-operator',
  ScaledObject: 'github.com/kedacore/keda/v2',
  TriggerAuthentication: 'github.com/kedacore/keda/v2',
  HTTPRoute: 'sigs.k8s.io/gateway-api',
};

const tools = (script: string) =>
  run('bash', ['-c', `source scripts/lib/tools.sh && ${script}`], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });

const compiles = (pattern: string): boolean => {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
};

/**
 * A CRD's openAPIV3Schema made strict the way the API server prunes: an object schema with properties and
 * neither additionalProperties nor x-kubernetes-preserve-unknown-fields rejects unknown fields.
 */
function strict(schema: K8sObject): K8sObject {
  if (schema === null || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map(strict);
  const out: K8sObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith('x-kubernetes-')) continue;
    if (key === 'pattern' && !compiles(String(value))) continue; // a Go-only regular expression (e.g. `(?i)`)
    out[key] =
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as K8sObject).map(([k, v]) => [k, strict(v)]))
        : strict(value);
  }
  if (
    schema.properties &&
    schema.additionalProperties === undefined &&
    !schema['x-kubernetes-preserve-unknown-fields']
  ) {
    out.additionalProperties = false;
  }
  if (schema['x-kubernetes-int-or-string']) {
    delete out.type;
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  return out;
}

describe('helm/taskgate: rendered objects against the Kubernetes and CRD schemas', () => {
  const validators = new Map<string, ValidateFunction>();
  const rendered = new Map<string, K8sObject[]>();
  let dir: string;
  let validate: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'taskgate-chart-'));
    // The venv is where tools.sh puts it (TASKGATE_TOOLS_DIR, by default .tools/), as the other tool tests ask.
    const venv = await tools('ensure_kubernetes_validate && echo "$TASKGATE_TOOLS_DIR/venv"');
    validate = `${venv.stdout.trim()}/bin/kubernetes-validate`;
    const { stdout } = await tools('crd_modules_json');
    const dirs = new Map<string, string>();
    for (const block of stdout.split(/\n(?=\{)/)) {
      const module = JSON.parse(block) as { Path: string; Dir?: string; Error?: string };
      if (module.Dir === undefined) throw new Error(`go mod download ${module.Path}: ${module.Error}`);
      dirs.set(module.Path, module.Dir);
    }
    const ajv = new Ajv({ strict: false, allErrors: true });
    // OpenAPI's numeric formats say the integer's width; the type check already applies.
    for (const format of ['int32', 'int64', 'double', 'float', 'byte', 'date-time', 'duration'])
      ajv.addFormat(format, true);
    for (const [kind, file] of Object.entries(CRD_FILES)) {
      const crd = parseAllDocuments(
        readFileSync(join(dirs.get(MODULE_OF[kind] ?? '') ?? '', file), 'utf8'),
      )[0]?.toJS() as K8sObject;
      expect(crd.spec.names.kind).toBe(kind);
      for (const version of crd.spec.versions) {
        validators.set(
          `${crd.spec.group}/${version.name}/${kind}`,
          ajv.compile(strict(version.schema.openAPIV3Schema)),
        );
      }
    }
    for (const file of VALUES_FILES) rendered.set(file, await renderChart({ valuesFiles: [file] }));
  }, 600_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(VALUES_FILES)('%s: built-in kinds pass kubernetes-validate --strict for 1.31 and 1.35', async (file) => {
    const objects = (rendered.get(file) ?? []).filter((object) => !CRD_FILES[object.kind]);
    expect(objects.length).toBeGreaterThan(5);
    // JSON documents: the validator reads YAML 1.1, where an unquoted `off` would be a boolean.
    const path = join(dir, file.replace('/', '-'));
    writeFileSync(path, objects.map((object) => `---\n${JSON.stringify(object)}\n`).join(''));
    for (const version of KUBERNETES_VERSIONS) {
      const { stdout } = await run(validate, ['-k', version, '--strict', path]);
      const passed = stdout.split('\n').filter((line) => line.startsWith('INFO') && line.includes(' passed for '));
      expect(passed.length, stdout).toBe(objects.length);
      expect(stdout).not.toMatch(/WARN|ERROR|failed/);
    }
  });

  it.each(VALUES_FILES)("%s: custom kinds pass their CRDs' openAPIV3Schema (unknown fields rejected)", (file) => {
    for (const object of (rendered.get(file) ?? []).filter((each) => CRD_FILES[each.kind])) {
      const check = validators.get(`${object.apiVersion}/${object.kind}`);
      expect(check, `${object.apiVersion} ${object.kind}`).toBeDefined();
      expect(check?.(object) ? [] : check?.errors, `${object.kind} ${object.metadata.name}`).toEqual([]);
    }
  });

  it('the full values render every custom kind, and a CRD schema rejects an unknown field', () => {
    const kinds = new Set((rendered.get('ci/full-values.yaml') ?? []).map((object) => object.kind));
    for (const kind of Object.keys(CRD_FILES)) expect(kinds.has(kind), kind).toBe(true);
    const scaled = (rendered.get('ci/full-values.yaml') ?? []).find((object) => object.kind === 'ScaledObject');
    const check = validators.get('keda.sh/v1alpha1/ScaledObject');
    expect(check?.({ ...scaled, spec: { ...scaled?.spec, bogus: 1 } })).toBe(false);
  });
});
