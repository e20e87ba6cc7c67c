--[[
  Marks that an attempt to execute a live task has started (a worker took its job). A task that was
  waiting for input when its previous attempt died goes back to 'working'; a working task only records
  the attempt (nothing a client sees changed, so nothing is published).

  Input:
    KEYS[1] task hash

    ARGV[1] task id
    ARGV[2] channel
    ARGV[3] attempt number (1-based)

  Output:
    { 0, snapshot }     started
    { -1 }              no such task (expired or never created)
    { -2, status }      the task is terminal: the job must do nothing
]]
--- @include "includes/codes"
--- @include "includes/now"
--- @include "includes/snapshot"
--- @include "includes/changeTask"

local task = loadTask(KEYS[1])
if not task then return { NOT_FOUND } end
if isTerminal(task.status) then return { TERMINAL, task.status } end

-- When the attempt started (Redis clock), for the queue-wait metric and the record.
local now = nowMs()
return changeTask(KEYS[1], ARGV[1], ARGV[2], task, { status = 'working', attempt = ARGV[3], startedAt = tostring(now) }, now)
