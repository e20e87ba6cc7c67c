import { readdirSync, readFileSync } from 'node:fs';
import { SETTINGS } from '@taskgate/cli';
import { shardQueues } from '@taskgate/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { FILE_SETTINGS, SECRET_SETTINGS, settingPath } from '../../scripts/lib/chart-values.js';
import { chartDir, renderChart, repoRoot, runHelm } from './support/render.js';

// biome-ignore lint/suspicious/noExplicitAny: rendered Kubernetes objects have no single static type.
type K8sObject = Record<string, any>;

const VALUES_FILES = readdirSync(`${chartDir}/ci`)
  .filter((name) => name.endsWith('-values.yaml'))
  .sort()
  .map((name) => `ci/${name}`);
/** Objects each ci values file renders (`helm template`, test hook included). */
const EXPECTED_COUNTS: Record<string, number> = {
  'ci/external-secret-values.yaml': 9,
  'ci/full-values.yaml': 26,
  'ci/keda-values.yaml': 12,
  'ci/minimal-values.yaml': 10,
};
const MINIMAL = ['ci/minimal-values.yaml'];
const KNOWN_ENV = new Set<string>(SETTINGS.map((setting) => setting.env));

const byKind = (objects: K8sObject[], kind: string): K8sObject[] => objects.filter((object) => object.kind === kind);
const one = (objects: K8sObject[], kind: string, name: string): K8sObject => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name} rendered`);
  return found;
};

/** Every variable a Deployment's containers get: env entries plus the keys of the ConfigMaps they load whole. */
function containerEnv(objects: K8sObject[], deployment: K8sObject): Map<string, string> {
  const env = new Map<string, string>();
  for (const container of deployment.spec.template.spec.containers) {
    for (const source of container.envFrom ?? []) {
      const data = one(objects, 'ConfigMap', source.configMapRef.name).data ?? {};
      for (const [name, value] of Object.entries(data)) env.set(name, String(value));
    }
    for (const entry of container.env ?? []) {
      const ref = entry.valueFrom?.secretKeyRef;
      const secret = ref && objects.find((object) => object.kind === 'Secret' && object.metadata.name === ref.name);
      env.set(entry.name, entry.value ?? secret?.stringData?.[ref.key] ?? `<secret ${ref?.name}/${ref?.key}>`);
    }
  }
  return env;
}

describe('helm/taskgate: lint and render', () => {
  it.each(VALUES_FILES)('helm lint --strict passes with %s', async (file) => {
    const output = await runHelm(['lint', '--strict', chartDir, '--values', `${chartDir}/${file}`]);
    expect(output).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it('the ci values files are the four variants (minimal, full, KEDA, external secret)', () => {
    expect(VALUES_FILES).toEqual(Object.keys(EXPECTED_COUNTS));
  });

  it.each(VALUES_FILES)('helm template renders %s: its object count', async (file) => {
    const objects = await renderChart({ valuesFiles: [file] });
    process.stdout.write(`helm template ${file}: ${objects.length} objects\n`);
    expect(objects.length).toBe(EXPECTED_COUNTS[file]);
    for (const object of objects) expect(object.metadata.labels['app.kubernetes.io/instance']).toBe('taskgate');
  });

  it('appVersion is the version of packages/cli', () => {
    const chart = parse(readFileSync(`${chartDir}/Chart.yaml`, 'utf8')) as { appVersion: string; apiVersion: string };
    const cli = JSON.parse(readFileSync(`${repoRoot}packages/cli/package.json`, 'utf8')) as { version: string };
    expect(chart.apiVersion).toBe('v2');
    expect(chart.appVersion).toBe(cli.version);
  });

  it('rejects unknown keys (values.schema.json is strict)', async () => {
    await expect(renderChart({ valuesFiles: MINIMAL, set: { bogus: '1' } })).rejects.toThrow(
      /additional properties 'bogus' not allowed/,
    );
    await expect(renderChart({ valuesFiles: MINIMAL, set: { 'gateway.settings.bogus': '1' } })).rejects.toThrow(
      /at '\/gateway\/settings': additional properties 'bogus' not allowed/,
    );
  });

  it('fails when both an HPA and KEDA are enabled for the workers', async () => {
    await expect(
      renderChart({ valuesFiles: ['ci/keda-values.yaml'], set: { 'worker.autoscaling.enabled': 'true' } }),
    ).rejects.toThrow(/worker.autoscaling.enabled and worker.keda.enabled are both on/);
  });

  it('fails without the cursor secret, without a Redis URL, and with auth none on 0.0.0.0', async () => {
    await expect(renderChart({ set: { 'redis.url': 'redis://r:6379' } })).rejects.toThrow(/secrets.cursorSecret/);
    await expect(renderChart({ set: { 'secrets.cursorSecret': 'x'.repeat(20) } })).rejects.toThrow(/redis.url/);
    await expect(renderChart({ valuesFiles: MINIMAL, set: { 'gateway.settings.auth': 'none' } })).rejects.toThrow(
      /auth is none while gateway.settings.host is 0.0.0.0/,
    );
  });
});

describe('helm/taskgate: settings', () => {
  it('every variable the full values give the pods is a setting taskgate knows', async () => {
    const objects = await renderChart({ valuesFiles: ['ci/full-values.yaml'] });
    const deployments = byKind(objects, 'Deployment');
    expect(deployments.map((deployment) => deployment.metadata.name).sort()).toEqual([
      'taskgate-bridge',
      'taskgate-gateway',
      'taskgate-worker',
    ]);
    for (const deployment of deployments) {
      const names = [...containerEnv(objects, deployment).keys()];
      // Besides taskgate's settings, only the OpenTelemetry SDK's variables of `otel`.
      expect(names.filter((name) => !KNOWN_ENV.has(name) && !name.startsWith('OTEL_'))).toEqual([]);
    }
    // The full values set every setting their scope reads, except the file-or-inline alternatives of auth and
    // what needs an external Redis set-up the chart's own Redis is not (Sentinel, Cluster, ACL user, a CA file,
    // replicas to WAIT for).
    const gateway = containerEnv(objects, one(objects, 'Deployment', 'taskgate-gateway'));
    const worker = containerEnv(objects, one(objects, 'Deployment', 'taskgate-worker'));
    const bridge = containerEnv(objects, one(objects, 'Deployment', 'taskgate-bridge'));
    const jwtOnly = (env: string): boolean => /JWT|JWKS|AUTHORIZATION_SERVERS|RESOURCE_URL|TOKENS_FILE/.test(env);
    const externalRedisOnly = (env: string): boolean =>
      /^TASKGATE_REDIS_(SENTINEL|CLUSTER|USERNAME|TLS_CA|WAIT)/.test(env);
    for (const setting of SETTINGS) {
      if (jwtOnly(setting.env) || externalRedisOnly(setting.env)) continue;
      if (setting.env in FILE_SETTINGS) {
        expect(bridge.has(setting.env), setting.env).toBe(true);
        continue;
      }
      if (setting.scope !== 'worker') expect(gateway.has(setting.env), setting.env).toBe(true);
      if (setting.scope !== 'gateway') expect(worker.has(setting.env), setting.env).toBe(true);
    }
    // `otel` reaches every taskgate container.
    for (const env of [gateway, worker, bridge]) {
      expect(env.get('OTEL_EXPORTER_OTLP_ENDPOINT')).toBe('http://otel-collector.observability:4318');
      expect(env.get('OTEL_EXPORTER_OTLP_PROTOCOL')).toBe('http/protobuf');
    }
  });

  it('every setting has a value path that reaches its variable (settings.ts is the list)', async () => {
    const sample = (setting: (typeof SETTINGS)[number]): string => {
      const options = (setting.schema as { options?: unknown }).options;
      if (Array.isArray(options)) return String(options.at(-1));
      if (setting.env === 'REDIS_URL') return 'rediss://u:p@redis.example:6380';
      if (['1', '1000', '100000'].some((value) => typeof setting.schema.safeParse(value).data === 'number')) {
        const value = ['100000', '1000', '1'].find((candidate) => setting.schema.safeParse(candidate).success);
        return value ?? '1';
      }
      return `sample-${setting.env.toLowerCase()}-0123456789`;
    };
    const byText = SETTINGS.filter((setting) => !(setting.env in FILE_SETTINGS));
    const set = Object.fromEntries(byText.map((setting) => [settingPath(setting), sample(setting)]));
    const objects = await renderChart({ valuesFiles: MINIMAL, set });
    const gateway = containerEnv(objects, one(objects, 'Deployment', 'taskgate-gateway'));
    const worker = containerEnv(objects, one(objects, 'Deployment', 'taskgate-worker'));
    for (const setting of byText) {
      if (setting.scope !== 'worker') expect(gateway.get(setting.env), setting.env).toBe(sample(setting));
      if (setting.scope !== 'gateway') expect(worker.get(setting.env), setting.env).toBe(sample(setting));
    }
  });

  it('runs the bridge from bridge.config (a mounted ConfigMap) or bridge.configSecret, and refuses it without either', async () => {
    const config = { connections: { legacy: { url: 'redis://legacy:6379/1' } } };
    const objects = await renderChart({
      valuesFiles: MINIMAL,
      set: { 'bridge.enabled': 'true', 'bridge.config.connections.legacy.url': config.connections.legacy.url },
    });
    const deployment = one(objects, 'Deployment', 'taskgate-bridge');
    const [container] = deployment.spec.template.spec.containers;
    expect(container.args).toEqual(['bridge']);
    const file = containerEnv(objects, deployment).get('TASKGATE_BRIDGE_CONFIG');
    const mount = container.volumeMounts.find((entry: K8sObject) => file?.startsWith(`${entry.mountPath}/`));
    expect(mount?.name).toBe('bridge-config');
    const volume = deployment.spec.template.spec.volumes.find((entry: K8sObject) => entry.name === 'bridge-config');
    const mounted = one(objects, 'ConfigMap', volume.configMap.name).data[file?.split('/').at(-1) ?? ''];
    expect(parse(mounted)).toEqual({ connections: config.connections });

    const fromSecret = await renderChart({
      valuesFiles: MINIMAL,
      set: { 'bridge.enabled': 'true', 'bridge.configSecret': 'my-bridge' },
    });
    const secretVolume = one(fromSecret, 'Deployment', 'taskgate-bridge').spec.template.spec.volumes.find(
      (entry: K8sObject) => entry.name === 'bridge-config',
    );
    expect(secretVolume.secret.secretName).toBe('my-bridge');
    expect(byKind(fromSecret, 'ConfigMap').map((map) => map.metadata.name)).not.toContain('taskgate-bridge');
    await expect(renderChart({ valuesFiles: MINIMAL, set: { 'bridge.enabled': 'true' } })).rejects.toThrow(
      /bridge.enabled needs the bridge config/,
    );
  });

  it('keeps secrets out of ConfigMaps; an existingSecret replaces the chart-made Secret', async () => {
    const objects = await renderChart({ valuesFiles: MINIMAL });
    const secret = one(objects, 'Secret', 'taskgate');
    expect(Object.keys(secret.stringData).sort()).toEqual(Object.keys(SECRET_SETTINGS).sort());
    const configMaps = JSON.stringify(byKind(objects, 'ConfigMap'));
    for (const value of Object.values(secret.stringData)) expect(configMaps).not.toContain(String(value));

    const external = await renderChart({ valuesFiles: ['ci/external-secret-values.yaml'] });
    expect(byKind(external, 'Secret')).toEqual([]);
    const env = one(external, 'Deployment', 'taskgate-gateway').spec.template.spec.containers[0].env;
    expect(env.map((entry: K8sObject) => entry.valueFrom.secretKeyRef.name)).toEqual([
      'taskgate-credentials',
      'taskgate-credentials',
      'taskgate-credentials',
      'taskgate-credentials',
      'taskgate-credentials',
    ]);
  });

  it('a config change rolls the pods (checksum annotations)', async () => {
    const checksum = async (set: Record<string, string>): Promise<string> => {
      const objects = await renderChart({ valuesFiles: MINIMAL, set });
      return one(objects, 'Deployment', 'taskgate-worker').spec.template.metadata.annotations['checksum/config'];
    };
    const before = await checksum({});
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    expect(await checksum({ 'worker.settings.statusCheckMs': '5000' })).not.toBe(before);
  });
});

describe('helm/taskgate: pods', () => {
  let objects: K8sObject[];
  beforeAll(async () => {
    objects = await renderChart({ valuesFiles: ['ci/full-values.yaml'] });
  });

  it('probes /healthz (liveness) and /readyz (readiness) on the port the setting names', () => {
    const ports = {
      'taskgate-gateway': ['http', 3000, 'PORT'],
      'taskgate-worker': ['metrics', 9464, 'TASKGATE_METRICS_PORT'],
    };
    for (const [name, [portName, port, env]] of Object.entries(ports)) {
      const deployment = one(objects, 'Deployment', name);
      const [container] = deployment.spec.template.spec.containers;
      expect(container.ports).toEqual([{ name: portName, containerPort: port, protocol: 'TCP' }]);
      expect(containerEnv(objects, deployment).get(env as string)).toBe(String(port));
      expect(container.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: portName });
      expect(container.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: portName });
    }
  });

  it('derives terminationGracePeriodSeconds from the drain timeout (and the worker abort grace)', () => {
    const gateway = one(objects, 'Deployment', 'taskgate-gateway').spec.template.spec;
    const worker = one(objects, 'Deployment', 'taskgate-worker').spec.template.spec;
    // full values: drainTimeoutMs 20000, abortGraceMs 5000, gateway preStop 5 s, worker preStop 0; 5 s margin.
    expect(gateway.containers[0].lifecycle.preStop).toEqual({ sleep: { seconds: 5 } });
    expect(gateway.terminationGracePeriodSeconds).toBe(5 + 20 + 5);
    expect(worker.containers[0].lifecycle).toBeUndefined();
    expect(worker.terminationGracePeriodSeconds).toBe(20 + 5 + 5);
  });

  it('every pod meets restricted Pod Security with a read-only root and an emptyDir on /tmp', async () => {
    const pods = objects.flatMap((object) =>
      object.kind === 'Pod' ? [object.spec] : object.spec?.template?.spec ? [object.spec.template.spec] : [],
    );
    expect(pods.length).toBe(5); // gateway, worker, bridge, the try-out Redis, the helm test pod
    for (const pod of pods) {
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(Number.isInteger(pod.securityContext.runAsUser)).toBe(true);
      for (const container of pod.containers) {
        expect(container.securityContext).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          runAsUser: expect.any(Number),
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        });
      }
    }
    for (const name of ['taskgate-gateway', 'taskgate-worker']) {
      const spec = one(objects, 'Deployment', name).spec.template.spec;
      expect(spec.volumes).toContainEqual({ name: 'tmp', emptyDir: {} });
      expect(spec.containers[0].volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
      expect(spec.containers[0].resources).toBeDefined(); // full values size them
    }
    const minimal = await renderChart({ valuesFiles: MINIMAL });
    expect(one(minimal, 'Deployment', 'taskgate-gateway').spec.template.spec.containers[0].resources).toBeUndefined();
  });

  it('the helm test pod calls a tool through the gateway Service', async () => {
    const [pod] = byKind(await renderChart({ valuesFiles: MINIMAL }), 'Pod');
    expect(pod?.metadata.annotations['helm.sh/hook']).toBe('test');
    expect(pod?.spec.containers[0].args[0]).toContain('taskgate call --url http://taskgate-gateway:80/mcp');
    expect(pod?.spec.containers[0].args[0]).toContain(`'echo' '{"text":"hello from helm test"}'`);
  });

  it('gateway: Service without session affinity, HPA on CPU and the waiter and stream gauges, PDB, spread', () => {
    const service = one(objects, 'Service', 'taskgate-gateway');
    expect(service.spec.sessionAffinity).toBeUndefined();
    const hpa = one(objects, 'HorizontalPodAutoscaler', 'taskgate-gateway');
    expect(hpa.spec.metrics.map((metric: K8sObject) => metric.resource?.name ?? metric.pods.metric.name)).toEqual([
      'cpu',
      'taskgate_task_waiters',
      'taskgate_sse_streams_open',
    ]);
    expect(one(objects, 'Deployment', 'taskgate-gateway').spec.replicas).toBeUndefined();
    expect(byKind(objects, 'PodDisruptionBudget').length).toBe(2);
    const spread = one(objects, 'Deployment', 'taskgate-gateway').spec.template.spec.topologySpreadConstraints;
    expect(spread[0].labelSelector.matchLabels['app.kubernetes.io/component']).toBe('gateway');
    expect(one(objects, 'HTTPRoute', 'taskgate-gateway').spec.rules[0].timeouts).toEqual({
      request: '0s',
      backendRequest: '0s',
    });
    expect(one(objects, 'Ingress', 'taskgate-gateway').spec.rules[0].host).toBe('mcp.example.com');
    const hosts = one(objects, 'ConfigMap', 'taskgate-gateway').data.TASKGATE_ALLOWED_HOSTS.split(',');
    expect(hosts).toEqual(expect.arrayContaining(['taskgate-gateway.default.svc', 'mcp.example.com', 'localhost']));
  });

  it('worker: KEDA scales on the BullMQ wait list of each tool queue (no worker HPA)', () => {
    expect(objects.filter((o) => o.kind === 'HorizontalPodAutoscaler').map((o) => o.metadata.name)).toEqual([
      'taskgate-gateway',
    ]);
    const scaled = one(objects, 'ScaledObject', 'taskgate-worker');
    expect(scaled.spec.scaleTargetRef.name).toBe('taskgate-worker');
    const lists = scaled.spec.triggers.map((trigger: K8sObject) => trigger.metadata.listName);
    expect(lists).toContain('tgfull:bull:{tool.echo}:tool.echo:wait');
    // A trigger per shard of a sharded tool, each on that shard's own wait list (its name is its hash tag).
    const shards = shardQueues('tool.search', 3);
    for (const shard of shards) expect(lists).toContain(`tgfull:bull:{${shard}}:${shard}:wait`);
    expect(lists).toHaveLength(10);
    expect(one(objects, 'Deployment', 'taskgate-worker').spec.replicas).toBeUndefined();
  });

  it('PrometheusRule and dashboard ConfigMap carry deploy/ files unchanged', () => {
    const rules = parse(readFileSync(`${repoRoot}deploy/prometheus/taskgate-rules.yaml`, 'utf8'));
    expect(one(objects, 'PrometheusRule', 'taskgate').spec).toEqual(rules);
    const dashboard = one(objects, 'ConfigMap', 'taskgate-dashboard');
    expect(dashboard.metadata.labels.grafana_dashboard).toBe('1');
    expect(dashboard.data['taskgate-dashboard.json']).toBe(
      readFileSync(`${repoRoot}deploy/grafana/taskgate-dashboard.json`, 'utf8').trimEnd(),
    );
  });

  it('NetworkPolicies: gateway ingress on its port; egress to Redis and DNS only', () => {
    const policy = one(objects, 'NetworkPolicy', 'taskgate-gateway');
    expect(policy.spec.ingress).toEqual([{ ports: [{ protocol: 'TCP', port: 3000 }] }]);
    expect(policy.spec.egress.map((rule: K8sObject) => rule.ports.map((p: K8sObject) => p.port))).toEqual([
      [6379],
      [53, 53],
    ]);
  });

  it('the try-out Redis: not for production, noeviction, AOF, redis:7.4', () => {
    const redis = one(objects, 'StatefulSet', 'taskgate-redis');
    expect(redis.metadata.labels['taskgate.dev/not-for-production']).toBe('true');
    expect(redis.spec.template.spec.containers[0].image).toBe('redis:7.4');
    const conf: string = one(objects, 'ConfigMap', 'taskgate-redis').data['redis.conf'];
    expect(conf).toMatch(/^maxmemory-policy noeviction$/m);
    expect(conf).toMatch(/^appendonly yes$/m);
    expect(one(objects, 'Secret', 'taskgate').stringData.REDIS_URL).toBe('redis://taskgate-redis:6379');
  });
});
