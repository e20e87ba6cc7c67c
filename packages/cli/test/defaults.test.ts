import { resolveTaskLimits } from '@taskgate/core';
import { GATEWAY_DEFAULTS, type ResolvedGatewayOptions, resolveGatewayOptions } from '@taskgate/gateway';
import { WORKER_DEFAULTS } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { gatewayOptions } from '../src/commands/gateway.js';
import { workerOptions } from '../src/commands/worker.js';
import { loadConfig } from '../src/config.js';
import { SETTINGS } from '../src/settings.js';

const SECRET = 'a-long-enough-secret';

/** Resolved options with the task limits filled in too, so two ways of leaving them out compare equal. */
function complete(options: ResolvedGatewayOptions): unknown {
  return { ...options, limits: resolveTaskLimits(options.limits) };
}

describe('defaults of the CLI and the libraries', () => {
  it('`taskgate gateway` without settings is `createGateway` without options', () => {
    const { config } = loadConfig('gateway', [], { TASKGATE_CURSOR_SECRET: SECRET });
    const fromCli = resolveGatewayOptions(gatewayOptions(config));
    const fromLibrary = resolveGatewayOptions({ redis: 'redis://127.0.0.1:6379', cursorSecret: SECRET });
    expect(complete(fromCli)).toEqual(complete(fromLibrary));
    // The values the docs and the chart document, so a change here is a change of both.
    expect(fromLibrary).toMatchObject({
      drainTimeoutMs: 25_000,
      maxSessionsPerPrincipal: 1000,
      maxStreamsPerPrincipal: 1000,
      rateLimits: {
        create: { points: 120, durationSec: 60 },
        read: { points: 1200, durationSec: 60 },
        cancel: { points: 120, durationSec: 60 },
      },
    });
    for (const name of Object.keys(GATEWAY_DEFAULTS) as (keyof typeof GATEWAY_DEFAULTS)[]) {
      expect(fromCli[name], name).toEqual(GATEWAY_DEFAULTS[name]);
    }
  });

  it('`taskgate worker` without settings is `createWorker` without options, but for its metrics port', () => {
    const { config } = loadConfig('worker', []);
    const fromCli: Record<string, unknown> = { ...workerOptions(config) };
    // No setting: the concurrency of reads is the tool's business or the library's default.
    const withoutSetting = new Set(['readConcurrency']);
    // `taskgate worker` serves /metrics on 9464; an embedded worker opens no port unless asked.
    expect(fromCli.metricsPort).toBe(9464);
    expect(WORKER_DEFAULTS.metricsPort).toBe(0);
    const compared = Object.keys(WORKER_DEFAULTS).filter((name) => !withoutSetting.has(name) && name !== 'metricsPort');
    expect(compared.length).toBeGreaterThan(10);
    for (const name of compared) {
      expect(fromCli[name], name).toEqual(WORKER_DEFAULTS[name as keyof typeof WORKER_DEFAULTS]);
    }
  });

  it('gives both processes one drain timeout', () => {
    const drain = SETTINGS.find((setting) => setting.env === 'TASKGATE_DRAIN_TIMEOUT_MS');
    expect(drain?.scope).toBe('both');
    expect(Number(drain?.default)).toBe(GATEWAY_DEFAULTS.drainTimeoutMs);
    expect(WORKER_DEFAULTS.drainTimeoutMs).toBe(GATEWAY_DEFAULTS.drainTimeoutMs);
  });
});
