import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The virtual environment scripts/lib/tools.sh `ensure_fastmcp4_venv` installs FastMCP 4 and fastmcp-tasks into. */
export function fastmcp4Venv(root: string): string {
  const { TASKGATE_TOOLS_DIR: tools = join(root, '.tools') } = process.env;
  return join(tools, 'fastmcp4-venv');
}

/** `fastmcp 4.1.4, fastmcp-tasks 4.1.4, pydocket 0.27.2`: what the virtual environment holds (dist-info). */
export function fastmcp4Versions(root: string): string {
  const lib = join(fastmcp4Venv(root), 'lib');
  const found: string[] = [];
  for (const python of existsSync(lib) ? readdirSync(lib) : []) {
    for (const entry of readdirSync(join(lib, python, 'site-packages'))) {
      const match = /^(fastmcp|fastmcp_tasks|pydocket)-([^-]+)\.dist-info$/.exec(entry);
      if (match !== null) found.push(`${match[1]?.replace('_', '-')} ${match[2]}`);
    }
  }
  return found.sort().join(', ') || 'not installed';
}
