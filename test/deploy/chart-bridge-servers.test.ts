import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBridgeConfig } from '@taskgate/bridge';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { renderChart } from './support/render.js';

// The chart's bridge with `servers:` (MCP servers behind the bridge): its own image with a stdio server's
// runtime, a Secret feeding `${VAR}`, and the mounted config as the bridge reads it.

const folder = mkdtempSync(join(tmpdir(), 'taskgate-chart-servers-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('chart: MCP servers behind the bridge', () => {
  it('mounts bridge.config with servers:, runs bridge.image and takes envFrom for the variables the config names', async () => {
    const servers = [
      { name: 'everything', stdio: { command: 'mcp-server-everything', args: ['stdio'] } },
      {
        name: 'search',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's reference to the bridge's environment
        http: { url: 'https://search.internal/mcp', headers: { Authorization: 'Bearer ${SEARCH_TOKEN}' } },
      },
    ];
    const values = join(folder, 'servers.yaml');
    writeFileSync(
      values,
      stringify({
        bridge: {
          enabled: true,
          image: 'registry.example.com/taskgate-bridge:0.1.0',
          envFrom: [{ secretRef: { name: 'upstream-tokens' } }],
          config: { servers },
        },
      }),
    );
    const objects = await renderChart({ valuesFiles: ['ci/minimal-values.yaml', values] });
    const deployment = objects.find(
      (object) => object.kind === 'Deployment' && object.metadata.name === 'taskgate-bridge',
    );
    const [container] = deployment?.spec.template.spec.containers ?? [];
    expect(container.image).toBe('registry.example.com/taskgate-bridge:0.1.0');
    expect(container.envFrom).toContainEqual({ secretRef: { name: 'upstream-tokens' } });
    const map = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === 'taskgate-bridge');
    // The mounted file is what the bridge reads: valid, with the token taken from its environment.
    const config = loadBridgeConfig(map?.data['bridge.yaml'], { SEARCH_TOKEN: 'from-the-secret' });
    expect(config.servers.map((server) => server.name)).toEqual(['everything', 'search']);
    expect(config.servers[1]?.http?.headers).toEqual({ Authorization: 'Bearer from-the-secret' });
    // Without bridge.image the bridge runs the chart's image.
    const plain = await renderChart({
      valuesFiles: ['ci/minimal-values.yaml'],
      set: {
        'bridge.enabled': 'true',
        'bridge.config.servers[0].name': 'x',
        'bridge.config.servers[0].http.url': 'http://x/mcp',
      },
    });
    const gateway = plain.find((object) => object.kind === 'Deployment' && object.metadata.name === 'taskgate-gateway');
    const bridge = plain.find((object) => object.kind === 'Deployment' && object.metadata.name === 'taskgate-bridge');
    expect(bridge?.spec.template.spec.containers[0].image).toBe(gateway?.spec.template.spec.containers[0].image);
  });
});
