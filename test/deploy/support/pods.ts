/**
 * The chart's Deployments as local processes: each container's command, args and environment exactly as the
 * rendered objects give them (`envFrom` and `valueFrom` resolved from the rendered ConfigMaps and Secrets; an
 * unresolvable reference fails), the image's `taskgate` entrypoint resolved to the workspace's built CLI bin
 * run with `node`. Each process gets its own port by overriding only the env var that carries the container
 * port, as Kubernetes gives each pod its own IP.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { repoRoot } from './render.js';

// biome-ignore lint/suspicious/noExplicitAny: rendered Kubernetes objects have no single static type.
type K8sObject = Record<string, any>;

/** The image's entrypoint, as the workspace builds it. */
export const cliBin = `${repoRoot}packages/cli/bin/taskgate.js`;

function find(objects: readonly K8sObject[], kind: string, name: string, path: string): K8sObject {
  const found = objects.find((object) => object.kind === kind && object.metadata?.name === name);
  if (found === undefined) throw new Error(`${path}: the chart rendered no ${kind} named ${name}`);
  return found;
}

function dataOf(object: K8sObject): Record<string, string> {
  if (object.kind === 'ConfigMap') return { ...(object.data ?? {}) };
  const decoded: Record<string, string> = {};
  for (const [key, value] of Object.entries(object.data ?? {}))
    decoded[key] = Buffer.from(String(value), 'base64').toString('utf8');
  return { ...decoded, ...(object.stringData ?? {}) };
}

/** A container's environment with every reference resolved against the rendered objects. */
export function resolveEnv(objects: readonly K8sObject[], container: K8sObject, path: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [index, source] of (container.envFrom ?? []).entries()) {
    const ref = source.configMapRef ?? source.secretRef;
    const kind = source.configMapRef !== undefined ? 'ConfigMap' : 'Secret';
    const where = `${path}.envFrom[${index}]`;
    if (ref === undefined) throw new Error(`${where}: neither configMapRef nor secretRef`);
    const object = objects.find((candidate) => candidate.kind === kind && candidate.metadata?.name === ref.name);
    if (object === undefined) {
      if (ref.optional === true) continue;
      throw new Error(`${where}: the chart rendered no ${kind} named ${ref.name}`);
    }
    Object.assign(env, dataOf(object));
  }
  for (const [index, variable] of (container.env ?? []).entries()) {
    const where = `${path}.env[${index}] (${variable.name})`;
    if (variable.value !== undefined) {
      env[variable.name] = String(variable.value);
      continue;
    }
    const ref = variable.valueFrom?.configMapKeyRef ?? variable.valueFrom?.secretKeyRef;
    if (ref === undefined) throw new Error(`${where}: no value and no configMapKeyRef/secretKeyRef`);
    const kind = variable.valueFrom.configMapKeyRef !== undefined ? 'ConfigMap' : 'Secret';
    const object = objects.find((candidate) => candidate.kind === kind && candidate.metadata?.name === ref.name);
    const value = object === undefined ? undefined : dataOf(object)[ref.key];
    if (value === undefined) {
      if (ref.optional === true) continue;
      if (object === undefined) throw new Error(`${where}: the chart rendered no ${kind} named ${ref.name}`);
      throw new Error(`${where}: ${kind} ${ref.name} has no key ${ref.key}`);
    }
    env[variable.name] = value;
  }
  return env;
}

export interface Probe {
  readonly path: string;
  readonly port: number;
  readonly host?: string;
}

/** An httpGet probe with its named port resolved to the container port. */
export function probeOf(container: K8sObject, kind: 'livenessProbe' | 'readinessProbe', path: string): Probe {
  const get = container[kind]?.httpGet;
  if (get === undefined) throw new Error(`${path}.${kind}: no httpGet probe`);
  const port =
    typeof get.port === 'number'
      ? get.port
      : (container.ports ?? []).find((candidate: K8sObject) => candidate.name === get.port)?.containerPort;
  if (typeof port !== 'number') throw new Error(`${path}.${kind}: port ${get.port} is not a container port`);
  const host = (get.httpHeaders ?? []).find((header: K8sObject) => header.name.toLowerCase() === 'host')?.value;
  return { path: get.path, port, ...(host !== undefined && { host }) };
}

export interface PodSpec {
  readonly deployment: string;
  readonly replicas: number;
  readonly command: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** The env var whose value is the probes' container port. */
  readonly portVariable: string;
  readonly liveness: Probe;
  readonly readiness: Probe;
}

/** The one container of a rendered Deployment, as a process to start. */
export function podSpec(objects: readonly K8sObject[], name: string): PodSpec {
  const deployment = find(objects, 'Deployment', name, `Deployment ${name}`);
  const containers: K8sObject[] = deployment.spec?.template?.spec?.containers ?? [];
  if (containers.length !== 1) throw new Error(`Deployment ${name}: expected one container, got ${containers.length}`);
  const container = containers[0] as K8sObject;
  const path = `Deployment ${name} container ${container.name}`;
  const env = resolveEnv(objects, container, path);
  const readiness = probeOf(container, 'readinessProbe', path);
  const liveness = probeOf(container, 'livenessProbe', path);
  if (liveness.port !== readiness.port)
    throw new Error(`${path}: liveness port ${liveness.port} and readiness port ${readiness.port} differ`);
  const portVariables = Object.keys(env).filter((key) => env[key] === String(readiness.port));
  if (portVariables.length !== 1)
    throw new Error(`${path}: ${portVariables.length} env vars hold the probe port ${readiness.port}`);
  return {
    deployment: name,
    replicas: deployment.spec?.replicas ?? 1,
    command: [...(container.command ?? []), ...(container.args ?? [])],
    env,
    portVariable: portVariables[0] as string,
    liveness,
    readiness,
  };
}

export interface PodProcess {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  readonly child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts one replica: the entrypoint `taskgate` is the workspace's built CLI bin, run with `node`. */
export function startPod(spec: PodSpec, name: string, port: number): PodProcess {
  const [entrypoint, ...args] = spec.command;
  if (entrypoint !== 'taskgate')
    throw new Error(`${spec.deployment}: command ${entrypoint} is not the image's taskgate`);
  const env = { PATH: process.env.PATH ?? '', ...spec.env, [spec.portVariable]: String(port) };
  const child = spawn(process.execPath, [cliBin, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid ?? -1;
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(pid, 'SIGTERM');
    const timer = setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL');
    }, 10_000);
    await exited;
    clearTimeout(timer);
  };
  return { name, pid, port, child, output: () => output, stop };
}

/** Resolves once the probe answers 200 on 127.0.0.1:<port> (the process's own port); fails after `timeoutMs`. */
export async function waitForProbe(pod: PodProcess, probe: Probe, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (pod.child.exitCode !== null) throw new Error(`${pod.name} exited:\n${pod.output()}`);
    try {
      const status = await probeStatus(pod.port, probe);
      if (status === 200) return;
      last = `status ${status}`;
    } catch (error) {
      last = String(error);
    }
    if (Date.now() > deadline) throw new Error(`${pod.name} ${probe.path}: ${last}\n${pod.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The status of one probe request (with the Host header the probe declares, as the kubelet sends it). */
function probeStatus(port: number, probe: Probe): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = probe.host === undefined ? {} : { host: probe.host };
    const req = request({ host: '127.0.0.1', port, path: probe.path, headers, timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.once('timeout', () => req.destroy(new Error('probe timed out')));
    req.once('error', reject);
    req.end();
  });
}
