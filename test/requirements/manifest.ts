/**
 * Every rule of the MCP 2025-11-25 Tasks utility under a stable id, each written in the project's words. Data
 * only. `docs/requirements/2025-11-25.md` is printed from it (`scripts/requirements-doc.ts`; a test keeps the two
 * equal). A test cites an id by writing it in brackets in its title, e.g.
 * `it('[CNL-1] rejects cancelling a completed task', ...)`; `coverage.test.ts` checks the citations.
 * "Receiver" is the side that runs the task (for `tools/call`: the gateways and their workers), "requestor" the
 * side that asked for it.
 */
export type Level = 'MUST' | 'MUST NOT' | 'SHOULD' | 'SHOULD NOT' | 'MAY' | 'INFO';

export interface Requirement {
  readonly id: string;
  readonly level: Level;
  /** The rule, in the project's words. */
  readonly rule: string;
}

export interface Section {
  /** The id prefix of the section's rules (`CAP` for `CAP-1` …). */
  readonly prefix: string;
  readonly title: string;
  /** Where the rules stand on the specification page. */
  readonly spec: string;
}

const SPEC = 'https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks';

export const SECTIONS: readonly Section[] = [
  { prefix: 'CAP', title: 'Capabilities', spec: `${SPEC}#capabilities` },
  { prefix: 'TOOL', title: 'Task support per tool', spec: `${SPEC}#tool-level-negotiation` },
  { prefix: 'CRT', title: 'Creating a task', spec: `${SPEC}#creating-tasks` },
  { prefix: 'GET', title: 'Reading a task', spec: `${SPEC}#getting-tasks` },
  { prefix: 'RES', title: 'Fetching the result', spec: `${SPEC}#retrieving-task-results` },
  { prefix: 'NTF', title: 'Status notifications', spec: `${SPEC}#task-status-notification` },
  { prefix: 'LST', title: 'Listing tasks', spec: `${SPEC}#listing-tasks` },
  { prefix: 'CNL', title: 'Cancelling', spec: `${SPEC}#cancelling-tasks` },
  { prefix: 'LIF', title: 'Status lifecycle', spec: `${SPEC}#task-status-lifecycle` },
  { prefix: 'INP', title: 'Waiting for input', spec: `${SPEC}#input-required-status` },
  { prefix: 'TTL', title: 'Lifetime and resource limits', spec: `${SPEC}#resource-management` },
  { prefix: 'META', title: 'The related-task marker', spec: `${SPEC}#associating-task-related-messages` },
  { prefix: 'PRG', title: 'Progress', spec: `${SPEC}#task-progress-notifications` },
  { prefix: 'ERR', title: 'Errors', spec: `${SPEC}#error-handling` },
  { prefix: 'SEC', title: 'Security', spec: `${SPEC}#security-considerations` },
  { prefix: 'CLT', title: 'Tasks run by the client', spec: `${SPEC}#capabilities` },
];

export const REQUIREMENTS: readonly Requirement[] = [
  {
    id: 'CAP-1',
    level: 'MUST',
    rule:
      'Each side that accepts task-augmented requests says so in `capabilities.tasks` of its initialize exchange: ' +
      'a server may list `list`, `cancel` and `requests.tools.call`; a client may list `list`, `cancel`, ' +
      '`requests.sampling.createMessage` and `requests.elicitation.create`.',
  },
  {
    id: 'CAP-2',
    level: 'SHOULD',
    rule:
      'A requestor only asks for a task where the other side announced support for that kind of request; with no ' +
      '`capabilities.tasks` at all it asks for none. Nothing outside the `tasks.requests` list supports tasks.',
  },
  {
    id: 'CAP-3',
    level: 'INFO',
    rule: 'The `tasks.list` and `tasks.cancel` entries tell whether `tasks/list` and `tasks/cancel` can be used.',
  },
  {
    id: 'CAP-4',
    level: 'MUST',
    rule: 'For a kind of request with no announced task support, the receiver runs the request as usual and disregards its `task` field.',
  },
  {
    id: 'CAP-5',
    level: 'MAY',
    rule: 'For a kind of request with announced task support, the receiver can refuse a plain (non-task) request of that kind with an error that asks for a task (ERR-2).',
  },
  {
    id: 'TOOL-1',
    level: 'INFO',
    rule: 'A tool in `tools/list` can state `execution.taskSupport` as `"required"`, `"optional"` or `"forbidden"`; leaving it out counts as `"forbidden"`.',
  },
  {
    id: 'TOOL-2',
    level: 'MUST NOT',
    rule: 'A client does not ask for a task on `tools/call` unless the server announced `tasks.requests.tools.call`.',
  },
  {
    id: 'TOOL-3',
    level: 'SHOULD',
    rule: 'A task-augmented call of a tool whose task support is missing or `"forbidden"` is answered with JSON-RPC error -32601.',
  },
  {
    id: 'TOOL-4',
    level: 'MAY',
    rule: 'A tool with `"optional"` task support can be called either way, as a task or as a plain call.',
  },
  {
    id: 'TOOL-5',
    level: 'MUST',
    rule: 'A plain (non-task) call of a tool whose task support is `"required"` is answered with JSON-RPC error -32601.',
  },
  {
    id: 'CRT-1',
    level: 'INFO',
    rule: 'A requestor asks for a task by adding `params.task`, optionally with `ttl`: the wanted lifetime in milliseconds, counted from creation.',
  },
  {
    id: 'CRT-2',
    level: 'MUST',
    rule: 'Accepting a task is answered with a `CreateTaskResult` (`{ task }`, `_meta` allowed), not with the result of the operation itself.',
  },
  {
    id: 'CRT-3',
    level: 'SHOULD',
    rule: 'That answer goes out promptly once the task is accepted, without waiting for the work.',
  },
  { id: 'CRT-4', level: 'MUST', rule: 'A new task has the status `working`.' },
  {
    id: 'CRT-5',
    level: 'MAY',
    rule: 'The create answer can carry a string under `_meta["io.modelcontextprotocol/model-immediate-response"]` for the host to pass to the model right away.',
  },
  {
    id: 'CRT-6',
    level: 'MUST',
    rule: 'The receiver makes up the task id when it creates the task: a string that no other task under its control has.',
  },
  {
    id: 'GET-1',
    level: 'INFO',
    rule: '`tasks/get` takes `{ taskId }` and answers with the fields of that task directly in the result.',
  },
  {
    id: 'GET-2',
    level: 'MUST',
    rule: 'Wherever a task is sent (create, get, list and cancel answers, status notifications) it has `createdAt` and `lastUpdatedAt`, both ISO 8601.',
  },
  {
    id: 'GET-3',
    level: 'MUST',
    rule: 'The `ttl` a task reports is the lifetime in force, in milliseconds, or `null` when the task does not expire.',
  },
  {
    id: 'GET-4',
    level: 'MAY',
    rule: 'A task can suggest how often to poll it through `pollInterval` (milliseconds); requestors should follow it.',
  },
  {
    id: 'GET-5',
    level: 'SHOULD NOT',
    rule: 'A `tasks/get` is answered directly, never turned into an SSE stream: the requestor chose to poll.',
  },
  {
    id: 'GET-6',
    level: 'SHOULD',
    rule: 'A requestor goes on polling until the task is terminal or `input_required`; a pending `tasks/result` does not release it from that.',
  },
  {
    id: 'RES-1',
    level: 'MUST',
    rule: 'For a task that is `completed`, `failed` or `cancelled`, `tasks/result` answers with what the original request would have answered: its result or its JSON-RPC error.',
  },
  {
    id: 'RES-2',
    level: 'MUST',
    rule: 'For a task still `working` or `input_required`, `tasks/result` waits and answers once the task is terminal.',
  },
  {
    id: 'RES-3',
    level: 'MUST',
    rule: 'The answer to `tasks/result` names its task in `_meta["io.modelcontextprotocol/related-task"]` (`{ taskId }`).',
  },
  {
    id: 'RES-4',
    level: 'INFO',
    rule: 'While it is not waiting on `tasks/result`, a requestor may poll `tasks/get` at the same time.',
  },
  {
    id: 'RES-5',
    level: 'INFO',
    rule: 'Over Streamable HTTP a client may close the SSE stream of a `tasks/get` or `tasks/result` whenever it likes; resuming with Last-Event-ID works as the transport defines.',
  },
  {
    id: 'NTF-1',
    level: 'MAY',
    rule: 'When a task changes status the receiver can send `notifications/tasks/status` with the full task as params.',
  },
  {
    id: 'NTF-2',
    level: 'MUST NOT',
    rule: 'A requestor does not depend on receiving status notifications; it keeps polling.',
  },
  {
    id: 'NTF-3',
    level: 'SHOULD NOT',
    rule: 'A status notification does not add the related-task `_meta`: its params already name the task.',
  },
  {
    id: 'LST-1',
    level: 'INFO',
    rule: '`tasks/list` takes an optional `cursor` and answers `{ tasks, nextCursor? }`.',
  },
  {
    id: 'LST-2',
    level: 'SHOULD',
    rule: 'Listing is paged by cursor with a bounded page size; a page after which more tasks remain must carry `nextCursor`.',
  },
  {
    id: 'LST-3',
    level: 'MUST',
    rule: 'A requestor does not interpret cursors; a cursor that is malformed or unknown is answered with -32602.',
  },
  {
    id: 'LST-4',
    level: 'MUST',
    rule: 'Every task a requestor may read with `tasks/get` also shows up in its `tasks/list`.',
  },
  {
    id: 'CNL-1',
    level: 'MUST',
    rule: 'Cancelling a task whose status is already terminal is answered with -32602 and a message naming that status.',
  },
  {
    id: 'CNL-2',
    level: 'SHOULD',
    rule: 'An accepted cancel tries to stop the work; the task must be `cancelled` before the answer, which is the task itself in that status.',
  },
  {
    id: 'CNL-3',
    level: 'MUST',
    rule: 'A cancelled task remains `cancelled`, whatever its work does afterwards (finishing or failing included).',
  },
  {
    id: 'CNL-4',
    level: 'INFO',
    rule: 'Cancelling does not delete; the receiver may drop cancelled tasks whenever it wants, so requestors read what they need first.',
  },
  {
    id: 'LIF-1',
    level: 'MUST',
    rule: 'Statuses move only so: from `working` to `input_required`, `completed`, `failed` or `cancelled`; from `input_required` to `working`, `completed`, `failed` or `cancelled`. `completed`, `failed` and `cancelled` are final.',
  },
  {
    id: 'INP-1',
    level: 'SHOULD',
    rule: 'A task that cannot go on until the requestor answers a request of the receiver is put in `input_required`.',
  },
  {
    id: 'INP-2',
    level: 'MUST',
    rule: 'Requests the receiver sends for a task (such as `elicitation/create` or `sampling/createMessage` during a tool-call task) carry the related-task `_meta` with that task id.',
  },
  {
    id: 'INP-3',
    level: 'SHOULD',
    rule: 'A requestor that sees `input_required` calls `tasks/result` first, since the pending requests arrive there.',
  },
  {
    id: 'INP-4',
    level: 'SHOULD',
    rule: 'When the input it needed has come in, the task leaves `input_required`, usually for `working`.',
  },
  {
    id: 'INP-5',
    level: 'INFO',
    rule: 'Over Streamable HTTP the server can hold messages for a task and send them alongside other responses; clients should be ready for them on any SSE stream, the GET stream included (an open `tasks/result` stream is one way to get them).',
  },
  {
    id: 'TTL-1',
    level: 'MAY',
    rule: 'The receiver can grant a different `ttl` than the one asked for, and then reports the one it granted (GET-3).',
  },
  {
    id: 'TTL-2',
    level: 'MAY',
    rule: 'Once its `ttl` has run out since creation, a task and its result can be deleted in any status; asking for it afterwards is answered with -32602 (not found, or expired).',
  },
  {
    id: 'TTL-3',
    level: 'SHOULD',
    rule: 'The receiver caps how many tasks one requestor may have running and how long a `ttl` may be, removes expired tasks soon, documents both caps, and watches its resource use.',
  },
  {
    id: 'META-1',
    level: 'MUST',
    rule: 'Every request, notification and response that belongs to a task names it in `_meta["io.modelcontextprotocol/related-task"]` (`{ taskId }`).',
  },
  {
    id: 'META-2',
    level: 'MUST',
    rule: 'In `tasks/get`, `tasks/result` and `tasks/cancel` the `taskId` parameter decides; a related-task `_meta` there is disregarded (and requestors leave it out).',
  },
  {
    id: 'META-3',
    level: 'SHOULD NOT',
    rule: 'Answers to `tasks/get`, `tasks/list` and `tasks/cancel` leave out the related-task `_meta`; the `tasks/result` answer has it (RES-3).',
  },
  {
    id: 'PRG-1',
    level: 'INFO',
    rule: 'Progress notifications work for task-augmented requests too, and the `progressToken` of the original request stays usable as long as the task lives.',
  },
  {
    id: 'ERR-1',
    level: 'MUST',
    rule: 'Error codes: -32602 for a malformed or unknown `taskId` in `tasks/get`, `tasks/result` or `tasks/cancel`, for a malformed or unknown `tasks/list` cursor and for cancelling a terminal task; -32603 for a failure inside the receiver.',
  },
  {
    id: 'ERR-2',
    level: 'MAY',
    rule: 'A receiver that only takes a kind of request as a task can refuse a plain one with -32600, saying that a task is required for it.',
  },
  { id: 'ERR-3', level: 'SHOULD', rule: 'Error messages explain what went wrong.' },
  {
    id: 'ERR-4',
    level: 'INFO',
    rule: 'When the underlying request fails (a JSON-RPC error while running, or for a tool a result with `isError: true`) the task becomes `failed`, and `tasks/get` should then explain why in `statusMessage`.',
  },
  {
    id: 'ERR-5',
    level: 'MUST',
    rule: '`tasks/result` of a `failed` task repeats the JSON-RPC error when the request ended with one, or answers successfully with the result (such as a `CallToolResult` with `isError: true`) when it ended with a result.',
  },
  {
    id: 'SEC-1',
    level: 'MUST',
    rule: 'With an authorization context at hand, each task belongs to the context that created it: `tasks/get`, `tasks/result` and `tasks/cancel` refuse tasks of other contexts, and `tasks/list` shows only the caller’s own.',
  },
  {
    id: 'SEC-2',
    level: 'MUST',
    rule: 'Without such binding, task ids come from a secure random source with enough entropy that they cannot be guessed, shorter lifetimes are worth considering, the limitation should be documented, and `tasks.list` should not be announced when requestors cannot be told apart.',
  },
  {
    id: 'SEC-3',
    level: 'SHOULD',
    rule: 'Task operations are rate-limited, against overload and against probing for task ids.',
  },
  {
    id: 'SEC-4',
    level: 'SHOULD',
    rule: 'Creating, finishing and fetching tasks is written to an audit log, with the authorization context when there is one, and suspicious patterns (many failed look-ups, polling far too often) are watched for.',
  },
  {
    id: 'CLT-1',
    level: 'INFO',
    rule: 'A client that announces `tasks.requests.elicitation.create` or `tasks.requests.sampling.createMessage` lets the server send those requests as tasks and then poll the client’s `tasks/get` and `tasks/result`.',
  },
];
