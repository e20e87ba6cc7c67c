import { defineConfig } from 'vitepress';

/** The docs site: `npm run docs:dev` serves it, `npm run docs:build` builds it (and fails on a dead link). */
export default defineConfig({
  title: 'taskgate',
  description: 'A Redis-backed, horizontally scalable broker for MCP tasks',
  cleanUrls: true,
  lastUpdated: false,
  themeConfig: {
    search: { provider: 'local' },
    nav: [
      { text: 'Guide', link: '/guide/getting-started' },
      { text: 'Operate', link: '/operate/deploy-helm' },
      { text: 'Reference', link: '/reference/settings' },
      { text: 'Internals', link: '/architecture' },
      { text: 'Performance', link: '/performance/' },
    ],
    sidebar: [
      {
        text: 'Guide',
        items: [
          { text: 'Getting started', link: '/guide/getting-started' },
          { text: 'Writing tools', link: '/guide/writing-tools' },
          { text: 'Input from the user', link: '/guide/input-from-the-user' },
          { text: 'Input as a client task', link: '/guide/client-tasks' },
          { text: 'Resources, prompts and completions', link: '/guide/resources-and-prompts' },
          { text: 'When a worker crashes', link: '/guide/worker-crashes' },
          { text: 'Both protocol revisions', link: '/revisions' },
          { text: 'The bridge: BullMQ', link: '/guide/bridge-bullmq' },
          { text: 'The bridge: Celery', link: '/guide/bridge-celery' },
          { text: 'The bridge: RabbitMQ', link: '/guide/bridge-rabbitmq' },
          { text: 'The bridge: Celery on RabbitMQ', link: '/guide/bridge-rabbitmq-celery' },
          { text: 'The bridge: MCP servers', link: '/guide/bridge-mcp-servers' },
        ],
      },
      {
        text: 'Operate',
        items: [
          { text: 'Deploy with Helm', link: '/operate/deploy-helm' },
          { text: 'Container image', link: '/operate/image' },
          { text: 'Configuration', link: '/operate/configuration' },
          { text: 'Health, drain and limits', link: '/operate/health-and-limits' },
          { text: 'Metrics, dashboards and logs', link: '/operate/metrics' },
          { text: 'Traces', link: '/operate/traces' },
          { text: 'Console and admin CLI', link: '/operate/console' },
          { text: 'Redis in production', link: '/operate/redis' },
          { text: 'Sizing', link: '/operate/sizing' },
          { text: 'Security', link: '/operate/security' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'Every setting', link: '/reference/settings' },
          { text: 'Every error code', link: '/reference/errors' },
          { text: 'Metrics', link: '/reference/metrics' },
          { text: 'CLI', link: '/reference/cli' },
          { text: 'Chart values', link: '/reference/chart-values' },
          { text: 'Tasks rules (2025-11-25)', link: '/requirements/2025-11-25' },
        ],
      },
      {
        text: 'Internals',
        items: [
          { text: 'Architecture', link: '/architecture' },
          { text: 'Request paths', link: '/internals/request-paths' },
          { text: 'Data in Redis', link: '/internals/data-in-redis' },
          { text: 'Worker and bridge', link: '/internals/worker-and-bridge' },
          { text: 'Operability', link: '/internals/operability' },
          { text: 'The test harness', link: '/internals/test-harness' },
          { text: 'Fault runs', link: '/internals/fault-runs' },
          { text: 'Decision: changes from the first design', link: '/decisions/0002-changes-from-the-first-design' },
        ],
      },
      {
        text: 'Performance and reliability',
        items: [
          { text: 'Performance', link: '/performance/' },
          { text: 'Latest full run', link: '/performance/latest-run' },
          { text: 'What one task costs Redis', link: '/performance/redis-cost' },
          { text: 'Redis Cluster', link: '/performance/cluster' },
          { text: 'The 2026-07-28 wire', link: '/performance/revisions' },
          { text: 'Reliability under faults', link: '/reliability/' },
          { text: 'What taskgate promises', link: '/reliability/guarantees' },
          { text: 'Conformance', link: '/reliability/conformance' },
          { text: 'Decision: cutting the per-task cost', link: '/decisions/0001-cutting-the-per-task-cost' },
        ],
      },
    ],
  },
});
