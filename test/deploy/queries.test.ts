import { readFileSync } from 'node:fs';
import { createMetricsRegistry } from '@taskgate/core';
import { tools } from '@taskgate/examples';
import { createGateway } from '@taskgate/gateway';
import { freePort, scrape, useRedis } from '@taskgate/test-harness';
import { createWorker } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = new URL('../../', import.meta.url);
const dashboard = JSON.parse(readFileSync(new URL('deploy/grafana/taskgate-dashboard.json', root), 'utf8')) as {
  panels: { title: string; type: string; targets?: { expr: string }[]; panels?: unknown[] }[];
};
const rules = parse(readFileSync(new URL('deploy/prometheus/taskgate-rules.yaml', root), 'utf8')) as {
  groups: { name: string; rules: { alert: string; expr: string; for?: string; labels?: { severity?: string } }[] }[];
};

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/** The metric names a PromQL expression selects (label values, matchers, ranges, groupings and functions removed). */
function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/(?<![\w.$])([a-zA-Z_:][a-zA-Z0-9_:]*)(?!\w)(\s*\()?/g)) {
    const [, name, call] = match;
    if (name === undefined || call !== undefined) continue; // a function
    if (KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}

const dashboardExprs = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
const ruleExprs = rules.groups.flatMap((group) => group.rules.map((rule) => rule.expr));

describe('deploy/: the Grafana dashboard and the Prometheus rules', () => {
  const redis = useRedis();

  it('[TTL-3] query only metrics that a running gateway and worker export (incl. _bucket/_sum/_count)', async () => {
    const gateway = createGateway({
      redis: redis.connect(),
      keyPrefix: redis.prefix,
      cursorSecret: 'deploy-test-cursor-secret-0123456789',
      metrics: createMetricsRegistry({ defaultMetrics: true }),
    });
    const worker = createWorker({
      redis: redis.url,
      prefix: redis.prefix,
      tools,
      metrics: createMetricsRegistry({ defaultMetrics: true }),
      metricsPort: await freePort(),
    });
    try {
      const address = await gateway.listen(0);
      await worker.ready;
      const exported = new Set([
        ...(await scrape(new URL('/metrics', address.url).href)).names(),
        ...(await scrape(`http://127.0.0.1:${worker.metricsPort}/metrics`)).names(),
      ]);
      expect(dashboardExprs.length).toBeGreaterThan(20);
      expect(ruleExprs.length).toBeGreaterThan(10);
      const unknown: string[] = [];
      for (const expr of [...dashboardExprs, ...ruleExprs]) {
        const names = metricNames(expr);
        expect(names, expr).not.toEqual([]);
        for (const name of names) if (!exported.has(name)) unknown.push(`${name} in ${expr}`);
      }
      expect(unknown).toEqual([]);
    } finally {
      await worker.close({ deadlineMs: 100 });
      await gateway.close();
    }
  });

  it('cover throughput, latency percentiles, queue depth, failures, waiters and Redis health', () => {
    const used = new Set([...dashboardExprs, ...ruleExprs].flatMap(metricNames));
    for (const name of [
      'taskgate_tasks_created_total',
      'taskgate_tasks_finished_total',
      'taskgate_task_duration_seconds_bucket',
      'taskgate_task_queue_wait_seconds_bucket',
      'taskgate_queue_jobs',
      'taskgate_task_waiters',
      'taskgate_redis_connected',
      'taskgate_redis_errors_total',
    ]) {
      expect(used).toContain(name);
    }
    for (const quantile of ['0.5', '0.95', '0.99']) {
      expect(dashboardExprs.some((expr) => expr.startsWith(`histogram_quantile(${quantile},`))).toBe(true);
    }
    for (const rule of rules.groups.flatMap((group) => group.rules)) {
      expect(rule.for, rule.alert).toMatch(/^\d+m$/);
      expect(['critical', 'warning', 'info']).toContain(rule.labels?.severity);
    }
  });

  it('finds the metric names of PromQL expressions', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, tool) (rate(a_bucket{status="x{y}"}[5m]))) / on (tool) b > 1e-9',
      ),
    ).toEqual(['a_bucket', 'b']);
  });
});
