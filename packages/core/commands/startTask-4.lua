--[[
  Marks that an attempt to execute a live task has started (a worker took its job). A task that was
  waiting for input when its previous attempt died goes back to 'working'; a working task only records
  the attempt (nothing a client sees changed, so nothing is published).

  A first attempt is not started with this script: its worker only reads the task (is it live?) and its
  start is written with its finish (finishTask ARGV[6]), or by this script with ARGV[4] once the attempt has
  run a while (a late record: the status stays, whatever it is now, and a start recorded already stays).

  Input:
    KEYS[1] task hash
    KEYS[2] the task's channel
    KEYS[3] feed of the task's session (the task hash when it has no session)
    KEYS[4] channel of the task's session (the task hash when it has no session)

    ARGV[1] task id
    ARGV[2] attempt number (1-based)
    ARGV[3] the starting pod's name for the task's trail ('' or absent for none; see includes/trail)
    ARGV[4] for a late record: when the attempt started (unix ms, Redis clock); '' or absent otherwise

  Output:
    { 0, snapshot }     started
    { -1 }              no such task (expired or never created)
    { -2, status }      the task is terminal: the job must do nothing
    { -11 }             KEYS[3..4] are not the task's session keys
]]
--- @include "includes/codes"
--- @include "includes/now"
--- @include "includes/snapshot"
--- @include "includes/changeTask"
--- @include "includes/trail"

local target = taskTarget(1)
local task = loadTask(target.key)
if not task then return { NOT_FOUND } end
if not sessionKeysMatch(target, task.feed, task.notify) then return { WRONG_SESSION_KEYS } end
if isTerminal(task.status) then return { TERMINAL, task.status } end

-- When the attempt started (Redis clock), for the queue-wait metric and the record.
local now = nowMs()
local late = ARGV[4] and ARGV[4] ~= ''
if late and task.startedAt and task.attempt == ARGV[2] then return { OK, encodeSnapshot(ARGV[1], task) } end
local fields = { attempt = ARGV[2], startedAt = late and ARGV[4] or tostring(now) }
if not late then fields.status = 'working' end
trailStart(fields, task, ARGV[3])
return changeTask(target, ARGV[1], task, fields, now)
