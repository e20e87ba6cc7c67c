import { cliVersion, commandHelp, SETTINGS_COMMANDS } from './command-help.js';
import { ConfigError } from './config.js';

const HELP = `taskgate — a Redis-backed, horizontally scalable broker for MCP tasks

usage: taskgate <command> [--flags]
       taskgate <command> --help    that command's flags, with their environment variables and defaults
       taskgate --version

commands:
  gateway   serve MCP (Streamable HTTP) on HOST:PORT/mcp
  worker    run tools from modules: taskgate worker --tools <module>[,<module>]
  bridge    offer existing BullMQ queues as tools: taskgate bridge --config bridge.yaml
  dev       a private Redis, a gateway on 127.0.0.1:3000 and a worker with the example tools
  call      call a tool through a gateway: taskgate call [--task] <tool> [json-arguments]
  tasks     operators' view of every owner's tasks: taskgate tasks list|get|cancel|purge --admin-token ...
  queue-shards  the BullMQ queue of each shard: taskgate queue-shards tool.<name> <N> (for KEDA triggers)

Every setting is an environment variable and a --flag (a flag wins).`;

const wantsHelp = (args: readonly string[]): boolean => args.includes('--help') || args.includes('-h');

/** Runs the `taskgate` command line; resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  // --help answers before anything runs: no Redis, no files, no listener.
  if (command !== undefined && command in SETTINGS_COMMANDS && wantsHelp(rest)) {
    process.stdout.write(commandHelp(command as keyof typeof SETTINGS_COMMANDS));
    return 0;
  }
  try {
    switch (command) {
      case 'gateway':
        return await (await import('./commands/gateway.js')).runGateway(rest);
      case 'worker':
        return await (await import('./commands/worker.js')).runWorker(rest);
      case 'bridge':
        return await (await import('./commands/bridge.js')).runBridge(rest);
      case 'dev':
        return await (await import('./commands/dev.js')).runDev(rest);
      case 'call':
        return await (await import('./commands/call.js')).runCall(rest);
      case 'tasks':
        return await (await import('./commands/tasks.js')).runTasks(rest);
      case '--version':
      case '-v':
      case 'version':
        process.stdout.write(`${cliVersion()}\n`);
        return 0;
      case 'queue-shards':
        return (await import('./commands/queue-shards.js')).runQueueShards(rest);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(`${HELP}\n`);
        return command === undefined ? 2 : 0;
      default:
        process.stderr.write(`taskgate: unknown command '${command}'\n\n${HELP}\n`);
        return 2;
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`taskgate ${command}: ${error.message}\n`);
      return 2;
    }
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    process.stderr.write(`taskgate ${command}: ${error instanceof Error ? error.message : String(error)}${cause}\n`);
    return 1;
  }
}
