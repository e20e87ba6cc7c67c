/**
 * The Helm chart's values (helm/taskgate/values.yaml) as data: every documented value with its path, default and
 * description, the settings they map to, and the strict values.schema.json built from both. Used by
 * scripts/chart-docs.ts (writes the schema and the chart README's value table) and the deployment tests.
 */
import { readFileSync } from 'node:fs';
import { SETTINGS } from '@taskgate/cli';
import { parse } from 'yaml';

type Setting = (typeof SETTINGS)[number];
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;

export const CHART_DIR = new URL('../../helm/taskgate/', import.meta.url);

/** The maps of values.yaml whose keys are taskgate settings, by the scope of the settings they hold. */
export const SETTINGS_MAPS = { both: 'settings', gateway: 'gateway.settings', worker: 'worker.settings' } as const;

/** Settings the chart keeps in its Secret, and where their values live. */
export const SECRET_SETTINGS: Readonly<Record<string, string>> = {
  REDIS_URL: 'redis.url',
  TASKGATE_REDIS_PASSWORD: 'redis.password',
  TASKGATE_CURSOR_SECRET: 'secrets.cursorSecret',
  TASKGATE_TOKENS: 'secrets.tokens',
  TASKGATE_ADMIN_TOKEN: 'secrets.adminToken',
  TASKGATE_REQUEST_STATE_SECRET: 'secrets.requestStateSecret',
};

/**
 * Settings the chart sets itself from a value that is not the setting's text: the bridge's config file, mounted
 * from a ConfigMap made of `bridge.config` (or the Secret `bridge.configSecret`).
 */
export const FILE_SETTINGS: Readonly<Record<string, string>> = {
  TASKGATE_BRIDGE_CONFIG: 'bridge.config',
};

/** The values key of a setting: its variable in camelCase without the TASKGATE_ prefix (PORT -> port). */
export function settingKey(env: string): string {
  return env
    .replace(/^TASKGATE_/, '')
    .toLowerCase()
    .replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** The values path that sets a setting. */
export function settingPath(setting: Setting): string {
  return (
    SECRET_SETTINGS[setting.env] ??
    FILE_SETTINGS[setting.env] ??
    `${SETTINGS_MAPS[setting.scope]}.${settingKey(setting.env)}`
  );
}

/** Kubernetes objects passed through as they are (checked by the Kubernetes schemas after rendering). */
const PASSTHROUGH = new Set([
  'imagePullSecrets',
  'resources',
  'podAnnotations',
  'nodeSelector',
  'tolerations',
  'affinity',
  'topologySpreadConstraints',
  'extraVolumes',
  'extraVolumeMounts',
  'annotations',
  'labels',
  'tls',
  'parentRefs',
  'redisPeers',
  'gatewayFrom',
]);

/** Values whose type the default alone does not tell. */
const OVERRIDES: Readonly<Record<string, Schema>> = {
  'image.pullPolicy': { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
  'gateway.service.type': { type: 'string', enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] },
  'worker.keda.trigger': { type: 'string', enum: ['redis', 'prometheus'] },
  'worker.keda.redis.tools': { type: 'array', items: { type: 'string', minLength: 1 } },
  'worker.keda.redis.queues': { type: 'array', items: { type: 'string', minLength: 1, pattern: '^[^:{}]+$' } },
  'gateway.httpRoute.hostnames': { type: 'array', items: { type: 'string', minLength: 1 } },
  'gateway.autoscaling.targetCPUUtilizationPercentage': { type: ['integer', 'null'], minimum: 1 },
  'gateway.autoscaling.taskWaitersPerPod': { type: ['integer', 'null'], minimum: 1 },
  'gateway.autoscaling.sseStreamsPerPod': { type: ['integer', 'null'], minimum: 1 },
  'redis.url': { type: 'string', pattern: '^(rediss?://.*)?$' },
  otel: { type: 'object', propertyNames: { pattern: '^OTEL_[A-Z0-9_]+$' }, additionalProperties: { type: 'string' } },
};

export interface ValueDoc {
  readonly path: string;
  readonly value: Json;
  readonly description: string;
  readonly setting?: Setting;
}

/** values.yaml parsed. */
export function chartValues(): Record<string, Json> {
  return parse(readFileSync(new URL('values.yaml', CHART_DIR), 'utf8')) as Record<string, Json>;
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function lookup(values: Json, path: readonly string[]): Json | undefined {
  let node: Json | undefined = values;
  for (const key of path) node = isObject(node) ? node[key] : undefined;
  return node;
}

const settingByPath = new Map<string, Setting>(SETTINGS.map((setting) => [settingPath(setting), setting]));

/** Is this path a leaf of the value table (a scalar, a list, an empty or passed-through map)? */
function isLeaf(path: readonly string[], value: Json | undefined): boolean {
  return !isObject(value) || Object.keys(value).length === 0 || PASSTHROUGH.has(path.at(-1) ?? '');
}

/**
 * Every leaf of values.yaml in file order with its `# --` comment (a setting's comes from its declaration).
 * Throws when a leaf that is no setting has no comment.
 */
export function valueDocs(text = readFileSync(new URL('values.yaml', CHART_DIR), 'utf8')): ValueDoc[] {
  const values = parse(text) as Json;
  const docs: ValueDoc[] = [];
  const stack: { indent: number; key: string }[] = [];
  let comment: string[] = [];
  let skipDeeperThan = -1;
  for (const line of text.split('\n')) {
    const indent = line.length - line.trimStart().length;
    if (skipDeeperThan >= 0 && (line.trim() === '' || indent > skipDeeperThan)) continue;
    skipDeeperThan = -1;
    const note = /^\s*# -- (.*)$/.exec(line);
    if (note) {
      comment = [note[1] ?? ''];
      continue;
    }
    const entry = /^(\s*)([A-Za-z0-9_]+):/.exec(line);
    if (!entry) {
      if (line.trim() === '') comment = [];
      continue;
    }
    while (stack.length > 0 && (stack.at(-1)?.indent ?? 0) >= indent) stack.pop();
    const path = [...stack.map((item) => item.key), entry[2] ?? ''];
    const value = lookup(values, path);
    if (isLeaf(path, value)) {
      const dotted = path.join('.');
      const setting = settingByPath.get(dotted);
      const description = comment.join(' ');
      if (setting === undefined && description === '') throw new Error(`values.yaml: ${dotted} has no "# --" comment`);
      docs.push({ path: dotted, value: value ?? null, description, ...(setting && { setting }) });
      if (value !== null && typeof value === 'object') skipDeeperThan = indent;
    } else {
      stack.push({ indent, key: entry[2] ?? '' });
    }
    comment = [];
  }
  return docs;
}

/** The JSON-schema type of a setting's value (integers for numeric settings, enums kept). */
function settingSchema(setting: Setting): Schema {
  const options = (setting.schema as { options?: unknown }).options;
  if (Array.isArray(options)) return { enum: [...options, null] };
  const numeric = ['1', '1000', '100000'].some((sample) => typeof setting.schema.safeParse(sample).data === 'number');
  if (numeric) return { type: ['integer', 'null'] };
  return { type: ['string', 'null'] };
}

function schemaOf(path: readonly string[], value: Json): Schema {
  const dotted = path.join('.');
  const setting = settingByPath.get(dotted);
  if (setting !== undefined && Object.values(FILE_SETTINGS).includes(dotted)) return { type: 'object' };
  if (setting !== undefined && !(dotted in SECRET_SETTINGS)) return settingSchema(setting);
  const override = OVERRIDES[dotted];
  if (override) return override;
  const key = path.at(-1) ?? '';
  if (PASSTHROUGH.has(key)) {
    if (Array.isArray(value)) return { type: 'array', items: { type: 'object' } };
    const stringMap = key === 'annotations' || key === 'labels' || key === 'podAnnotations' || key === 'nodeSelector';
    return { type: 'object', ...(stringMap && { additionalProperties: { type: 'string' } }) };
  }
  if (Array.isArray(value)) {
    const [first] = value;
    return { type: 'array', ...(first !== undefined && { items: schemaOf(path, first) }) };
  }
  if (isObject(value)) {
    const properties = Object.fromEntries(
      Object.entries(value).map(([name, child]) => [name, schemaOf([...path, name], child)]),
    );
    return { type: 'object', additionalProperties: false, properties };
  }
  if (typeof value === 'boolean') return { type: 'boolean' };
  if (typeof value === 'number') return { type: Number.isInteger(value) ? 'integer' : 'number' };
  if (typeof value === 'string') return { type: 'string' };
  throw new Error(`values.yaml: ${dotted} is null; give it a type in scripts/lib/chart-values.ts OVERRIDES`);
}

/** values.schema.json: every object strict (unknown keys rejected), except passed-through Kubernetes objects. */
export function valuesSchema(values = chartValues()): Schema {
  const root = schemaOf([], values);
  const properties = { ...(root.properties as Schema), global: { type: 'object' } };
  return { $schema: 'http://json-schema.org/draft-07/schema#', title: 'taskgate chart values', ...root, properties };
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

/** The chart README's value table. */
export function valuesTable(docs = valueDocs()): string {
  const rows = docs.map((doc) => {
    const shown = doc.value === null ? '`null`' : `\`${cell(JSON.stringify(doc.value))}\``;
    const taskgateDefault =
      doc.setting && 'default' in doc.setting ? ` taskgate's default: \`${doc.setting.default || '(empty)'}\`.` : '';
    const meaning = doc.setting
      ? `\`${doc.setting.env}\`: ${doc.setting.description}${taskgateDefault}${doc.description ? ` ${doc.description}` : ''}`
      : doc.description;
    return `| \`${doc.path}\` | ${shown} | ${cell(meaning)} |`;
  });
  return ['| value | default | meaning |', '|---|---|---|', ...rows].join('\n');
}
