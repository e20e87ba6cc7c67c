--[[
  working | input_required -> cancelled, on behalf of the task's owner.

  Input:
    KEYS[1] task hash
    KEYS[2] owner's non-terminal tasks (zset)

    ARGV[1] task id
    ARGV[2] channel
    ARGV[3] owner id of the caller ('' when the broker itself cancels)
    ARGV[4] status message
    ARGV[5] channel on which workers hear of cancelled tasks (payload: the task id)

  Output:
    { 0, snapshot }     cancelled
    { -1 }              no such task, or another owner's task (indistinguishable on purpose)
    { -2, status }      the task is terminal already
]]
--- @include "includes/codes"
--- @include "includes/now"
--- @include "includes/snapshot"
--- @include "includes/changeTask"

local task = loadTask(KEYS[1])
if not task then return { NOT_FOUND } end
if ARGV[3] ~= '' and task.owner ~= ARGV[3] then return { NOT_FOUND } end
if isTerminal(task.status) then return { TERMINAL, task.status } end

redis.call('ZREM', KEYS[2], ARGV[1])
local changed = changeTask(KEYS[1], ARGV[1], ARGV[2], task, { status = 'cancelled', statusMessage = ARGV[4] })
-- Workers hear of cancellations on one channel per process, not one subscription per running job.
redis.call('PUBLISH', ARGV[5], ARGV[1])
return changed
