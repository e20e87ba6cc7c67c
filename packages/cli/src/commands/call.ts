import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { flagProblem } from '../closest-flag.js';
import { ConfigError } from '../config.js';

const USAGE = `usage: taskgate call [--url URL] [--token TOKEN] [--task] [--ttl MS] <tool> [json-arguments]

Calls one tool through a gateway with the official MCP client: progress and status on stderr, the result on stdout.

  --url URL      the gateway's MCP endpoint (default http://127.0.0.1:3000/mcp)
  --token TOKEN  a bearer token, sent as the Authorization header
  --task         run the call as an MCP task (when the server supports tasks for tools/call)
  --ttl MS       the task's requested ttl`;

const OPTIONS = {
  url: { type: 'string', default: 'http://127.0.0.1:3000/mcp' },
  token: { type: 'string' },
  task: { type: 'boolean', default: false },
  ttl: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

function parse(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true });
  } catch (error) {
    const known = Object.keys(OPTIONS).map((name) => `--${name}`);
    throw new ConfigError([flagProblem(error, known, 'call'), USAGE]);
  }
}

/** Asks the user on the terminal for each field of a form elicitation. */
async function answerOnTerminal(message: string, properties: Record<string, { title?: string; type?: string }>) {
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    process.stderr.write(`${message}\n`);
    const content: Record<string, string | number | boolean> = {};
    for (const [name, schema] of Object.entries(properties)) {
      const answer = (await terminal.question(`  ${schema.title ?? name}: `)).trim();
      if (answer === '') return { action: 'decline' as const };
      content[name] =
        schema.type === 'number' || schema.type === 'integer'
          ? Number(answer)
          : schema.type === 'boolean'
            ? answer === 'true'
            : answer;
    }
    return { action: 'accept' as const, content };
  } finally {
    terminal.close();
  }
}

/**
 * `taskgate call`: calls one tool through a taskgate gateway with the official MCP client, printing
 * progress and status to stderr and the result to stdout. `--task` runs it as an MCP task.
 */
export async function runCall(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv);
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [name, json] = positionals;
  if (name === undefined) throw new ConfigError([USAGE]);
  let args: Record<string, unknown>;
  try {
    args = json === undefined ? {} : (JSON.parse(json) as Record<string, unknown>);
  } catch {
    throw new ConfigError([`the arguments must be a JSON object, got: ${json}`, USAGE]);
  }
  const headers: Record<string, string> = values.token === undefined ? {} : { Authorization: `Bearer ${values.token}` };
  const transport = new StreamableHTTPClientTransport(new URL(values.url), { requestInit: { headers } });
  const client = new Client(
    { name: 'taskgate-call', version: '0.1.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const params = request.params as {
      message: string;
      requestedSchema?: { properties?: Record<string, { title?: string; type?: string }> };
    };
    return await answerOnTerminal(params.message, params.requestedSchema?.properties ?? {});
  });
  await client.connect(transport);
  try {
    const onprogress = (p: { progress: number; total?: number | undefined; message?: string | undefined }): void => {
      process.stderr.write(
        `progress ${p.progress}${p.total === undefined ? '' : `/${p.total}`}${p.message ? ` ${p.message}` : ''}\n`,
      );
    };
    // CAP-2, TOOL-2: ask for a task only when the server declared task support for tools/call.
    const serverRunsTasks = client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined;
    if (values.task && !serverRunsTasks) {
      process.stderr.write(
        'note: the server does not support tasks for tools/call (capabilities.tasks.requests.tools.call); ' +
          'calling the tool without a task\n',
      );
    }
    const task =
      values.task && serverRunsTasks ? { task: values.ttl === undefined ? {} : { ttl: Number(values.ttl) } } : {};
    const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, undefined, {
      onprogress,
      ...task,
    });
    for await (const message of stream) {
      if (message.type === 'taskCreated') process.stderr.write(`task ${message.task.taskId} created\n`);
      else if (message.type === 'taskStatus') {
        process.stderr.write(
          `status ${message.task.status}${message.task.statusMessage ? `: ${message.task.statusMessage}` : ''}\n`,
        );
      } else if (message.type === 'result') {
        process.stdout.write(`${JSON.stringify(message.result, null, 2)}\n`);
        return message.result.isError === true ? 1 : 0;
      } else if (message.type === 'error') {
        process.stderr.write(`error: ${message.error.message}\n`);
        return 1;
      }
    }
    return 1;
  } finally {
    await client.close();
  }
}
