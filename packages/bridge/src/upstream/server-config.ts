import { z } from 'zod';

/** Server names: they become metric labels, log fields and the default prefix. */
const SERVER_NAME = /^[a-z0-9-]+$/;
/** What a prefix may hold: it starts every published tool name (MCP's tool-name alphabet). */
const PREFIX = /^[A-Za-z0-9_.-]{0,64}$/;

const StdioSchema = z.strictObject({
  command: z.string().min(1, 'must name the program to start'),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().min(1).optional(),
});

const HttpSchema = z.strictObject({
  url: z.string().min(1, 'must be the URL of the MCP endpoint'),
  headers: z.record(z.string(), z.string()).default({}),
});

const RetryOnCrash = z.union([z.boolean(), z.number().int().min(0).max(100)]);

const OverrideSchema = z.strictObject({
  taskSupport: z.enum(['optional', 'required', 'forbidden']).optional(),
  title: z.string().min(1).optional(),
  description: z.string().trim().min(1, 'must be a non-empty string').optional(),
  retryOnCrash: RetryOnCrash.optional(),
});

export const ServerSchema = z
  .strictObject({
    name: z.string().regex(SERVER_NAME, 'must be lowercase letters, digits and "-"'),
    stdio: StdioSchema.optional(),
    http: HttpSchema.optional(),
    prefix: z.string().regex(PREFIX, 'must be at most 64 characters of A-Z a-z 0-9 _ - .').optional(),
    /** auto: 2026-07-28 when the server offers it (server/discover), else 2025-11-25; or one pinned. */
    protocolVersion: z.enum(['auto', '2025-11-25', '2026-07-28']).default('auto'),
    taskSupport: z.enum(['optional', 'required', 'forbidden']).default('optional'),
    inlineWaitMs: z.number().int().min(0).optional(),
    concurrency: z.number().int().min(1).default(10),
    /** Shards of the server's taskgate queue (default: TASKGATE_QUEUE_SHARDS), as a tool's queueShards. */
    queueShards: z.number().int().min(1).max(64).optional(),
    processes: z.number().int().min(1).optional(),
    timeoutMs: z.number().int().min(1).default(3_600_000),
    allow: z.array(z.string().min(1)).min(1, 'must list at least one principal (or leave allow out)').optional(),
    tools: z
      .strictObject({
        include: z.array(z.string().min(1)).optional(),
        exclude: z.array(z.string().min(1)).default([]),
        overrides: z.record(z.string(), OverrideSchema).default({}),
      })
      .default({ exclude: [], overrides: {} }),
  })
  .superRefine((server, context) => {
    if ((server.stdio === undefined) === (server.http === undefined)) {
      context.addIssue({ code: 'custom', path: [], message: 'needs exactly one of stdio or http' });
    }
    if (server.http !== undefined && server.processes !== undefined) {
      context.addIssue({ code: 'custom', path: ['processes'], message: 'applies to stdio servers only' });
    }
  })
  .transform((server) => ({
    ...server,
    prefix: server.prefix ?? `${server.name}_`,
    processes: server.processes ?? 1,
  }));

export type UpstreamServerConfig = z.output<typeof ServerSchema>;
export type UpstreamToolOverride = z.output<typeof OverrideSchema>;

/** `${NAME}` references to the bridge's environment. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** `text` with each `${NAME}` replaced from `env`; every unset name becomes a problem naming `path`. */
function expand(text: string, path: string, env: NodeJS.ProcessEnv, problems: string[]): string {
  return text.replace(REFERENCE, (_whole, name: string) => {
    const value = env[name];
    if (value === undefined) {
      problems.push(`${path}: environment variable ${name} is not set`);
      return '';
    }
    return value;
  });
}

function expandRecord(
  record: Record<string, string>,
  path: string,
  env: NodeJS.ProcessEnv,
  problems: string[],
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record).map(([key, value]) => [key, expand(value, `${path}.${key}`, env, problems)]),
  );
}

/**
 * The servers with `${NAME}` in `stdio.env`, `http.headers` and `http.url` read from `env` (so a Kubernetes
 * Secret can feed them); checks the rest of what the schema cannot: unique names, a usable URL.
 */
export function resolveServers(
  servers: readonly UpstreamServerConfig[],
  env: NodeJS.ProcessEnv,
  problems: string[],
): UpstreamServerConfig[] {
  const names = new Set<string>();
  return servers.map((server, index) => {
    const path = `servers[${index}]`;
    if (names.has(server.name)) problems.push(`${path}.name: duplicate server name "${server.name}"`);
    names.add(server.name);
    if (server.stdio !== undefined) {
      const env2 = expandRecord(server.stdio.env, `${path}.stdio.env`, env, problems);
      return { ...server, stdio: { ...server.stdio, env: env2 } };
    }
    if (server.http !== undefined) {
      const url = expand(server.http.url, `${path}.http.url`, env, problems);
      if (!problems.some((problem) => problem.startsWith(`${path}.http.url`)) && !/^https?:\/\/[^/]/.test(url)) {
        problems.push(`${path}.http.url: must be an http:// or https:// URL`);
      }
      const headers = expandRecord(server.http.headers, `${path}.http.headers`, env, problems);
      return { ...server, http: { url, headers } };
    }
    return server;
  });
}

/**
 * What either SDK's stdio transport is started with for a server: its command, arguments, environment and
 * working directory, and its stderr piped (the bridge logs it line by line with the server's name).
 */
export function stdioTransportOptions(stdio: NonNullable<UpstreamServerConfig['stdio']>) {
  return {
    command: stdio.command,
    args: stdio.args,
    env: stdio.env,
    ...(stdio.cwd !== undefined && { cwd: stdio.cwd }),
    stderr: 'pipe' as const,
  };
}
