--[[
  Marks that an execution of a live task's tool begins (a worker took its job), before the tool runs: a
  worker that finds a job which stalled can tell from the record whether an execution had begun (a crash)
  or whether BullMQ only handed the job out without any worker running it (a fetch whose reply was lost).
  A task that was waiting for input when its previous execution died goes back to 'working'; a working
  task only records the start (nothing a client sees changed, so nothing is published).

  Input:
    KEYS[1] task hash
    KEYS[2] the task's channel
    KEYS[3] feed of the task's session (the task hash when it has no session)
    KEYS[4] channel of the task's session (the task hash when it has no session)

    ARGV[1] task id
    ARGV[2] attempt number (1-based; a first attempt's is not stored: see includes/trail)
    ARGV[3] the starting pod's name for the task's trail ('' or absent for none; see includes/trail)
    ARGV[4] when the execution began (unix ms, the Redis clock as the worker follows it, see RedisClock;
            '' or absent: the server's TIME)

  Output:
    { 0, snapshot }     started, or started already by this very call (sent again after a lost reply)
    { -1 }              no such task (expired or never created)
    { -2, status }      the task is terminal: the job must do nothing
    { -11 }             KEYS[3..4] are not the task's session keys
]]
--- @include "includes/codes"
--- @include "includes/snapshot"
--- @include "includes/changeTask"
--- @include "includes/trail"

local target = taskTarget(1)
local task = loadTask(target.key)
if not task then return { NOT_FOUND } end
if not sessionKeysMatch(target, task.feed, task.notify) then return { WRONG_SESSION_KEYS } end
if isTerminal(task.status) then return { TERMINAL, task.status } end

-- Not before the task's creation or its last change, whatever half a round trip made the worker's clock say.
local now = math.max(tonumber(ARGV[4]) or nowMs(), tonumber(task.createdAt) or 0, tonumber(task.lastUpdatedAt) or 0)
local startedAt = tostring(now)
-- The same start again (its reply lost) finds what it wrote: the task working, this time and this attempt. A
-- task back in input_required since (its tool asked for input, then its execution died) is another start of
-- the same millisecond, and goes back to 'working'.
if task.status == 'working' and task.startedAt == startedAt and (task.attempt or '1') == ARGV[2] then
  return { OK, encodeSnapshot(ARGV[1], task) }
end
local fields = { startedAt = startedAt }
if task.status ~= 'working' then fields.status = 'working' end
if ARGV[2] ~= '1' or task.attempt then fields.attempt = ARGV[2] end
trailStart(fields, task, ARGV[3])
return changeTask(target, ARGV[1], task, fields, now)
