--[[
  working | input_required -> completed | failed, storing the exact outcome that tasks/result returns.
  A task that is already terminal (cancelled, say) keeps its status and outcome.

  Input:
    KEYS[1] task hash
    KEYS[2] owner's non-terminal tasks (zset)

    ARGV[1] task id
    ARGV[2] channel
    ARGV[3] 'completed' or 'failed'
    ARGV[4] outcome JSON: {"result": ...} or {"error": {...}}
    ARGV[5] status message ('' for none)

  Output:
    { 0, snapshot }     finished
    { -1 }              no such task
    { -2, status }      the task was terminal already
    { -3, status }      ARGV[3] is not a finishing status
]]
--- @include "includes/codes"
--- @include "includes/now"
--- @include "includes/snapshot"
--- @include "includes/changeTask"

local task = loadTask(KEYS[1])
if not task then return { NOT_FOUND } end
if isTerminal(task.status) then return { TERMINAL, task.status } end
if ARGV[3] ~= 'completed' and ARGV[3] ~= 'failed' then return { ILLEGAL_TRANSITION, task.status } end

redis.call('ZREM', KEYS[2], ARGV[1])
local fields = { status = ARGV[3], outcome = ARGV[4] }
if ARGV[5] ~= '' then fields.statusMessage = ARGV[5] end
return changeTask(KEYS[1], ARGV[1], ARGV[2], task, fields)
