import { readFileSync } from 'node:fs';
import { createGateway, type GatewayOptions, parseTokens } from '@taskgate/gateway';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { createLogger } from '../logger.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Gateway options from validated settings; every problem is reported as a ConfigError. */
export function gatewayOptions(config: Config): GatewayOptions {
  const problems: string[] = [];
  const secret = config.TASKGATE_CURSOR_SECRET;
  if (secret === undefined) {
    problems.push(
      'TASKGATE_CURSOR_SECRET (--cursor-secret) is required: the same random value (≥ 16 characters) on every ' +
        'gateway, e.g. `openssl rand -base64 32`',
    );
  }
  let auth: GatewayOptions['auth'] = { mode: 'none' };
  if (config.TASKGATE_AUTH === 'tokens') {
    const text =
      config.TASKGATE_TOKENS_FILE !== undefined
        ? readTokensFile(config.TASKGATE_TOKENS_FILE, problems)
        : config.TASKGATE_TOKENS;
    if (text === undefined) {
      problems.push('TASKGATE_AUTH=tokens needs TASKGATE_TOKENS_FILE (--tokens-file) or TASKGATE_TOKENS (--tokens)');
    } else {
      try {
        const tokens = parseTokens(text);
        if (tokens.size === 0) problems.push('the token list is empty');
        auth = { mode: 'tokens', tokens };
      } catch (error) {
        problems.push(`tokens: ${(error as Error).message}`);
      }
    }
  } else if (!LOOPBACK.has(config.HOST)) {
    problems.push(
      `HOST=${config.HOST} with TASKGATE_AUTH=none would let anyone who reaches the port use it: ` +
        'keep HOST=127.0.0.1 or set TASKGATE_AUTH=tokens',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    redis: config.REDIS_URL,
    keyPrefix: config.TASKGATE_KEY_PREFIX,
    cursorSecret: secret as string,
    auth,
    limits: {
      defaultTtlMs: config.TASKGATE_DEFAULT_TTL_MS,
      maxTtlMs: config.TASKGATE_MAX_TTL_MS,
      pollIntervalMs: config.TASKGATE_POLL_INTERVAL_MS,
      maxActivePerOwner: config.TASKGATE_MAX_ACTIVE_TASKS,
      pageSize: config.TASKGATE_PAGE_SIZE,
    },
    bodyLimitBytes: config.TASKGATE_MAX_BODY_BYTES,
    allowedHosts: config.TASKGATE_ALLOWED_HOSTS,
    ...(config.TASKGATE_ALLOWED_ORIGINS.length > 0 && { allowedOrigins: config.TASKGATE_ALLOWED_ORIGINS }),
  };
}

function readTokensFile(path: string, problems: string[]): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    problems.push(`TASKGATE_TOKENS_FILE: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    return undefined;
  }
}

/** `taskgate gateway`: serves MCP on HOST:PORT until SIGTERM/SIGINT, then drains and exits. */
export async function runGateway(argv: readonly string[]): Promise<number> {
  const { config } = loadConfig('gateway', argv);
  const logger = createLogger(config.LOG_LEVEL, 'taskgate-gateway');
  const gateway = createGateway({ ...gatewayOptions(config), logger });
  const address = await gateway.listen(config.PORT, config.HOST);
  logger.info({ url: address.url }, 'gateway listening');
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      logger.info({ signal }, 'gateway draining');
      gateway.close().then(resolve, (error: unknown) => {
        logger.error({ err: error }, 'gateway close failed');
        resolve();
      });
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  return 0;
}
