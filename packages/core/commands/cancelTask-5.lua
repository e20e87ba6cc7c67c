--[[
  working | input_required -> cancelled, on behalf of the task's owner.

  Input:
    KEYS[1] task hash
    KEYS[2] the task's channel
    KEYS[3] feed of the task's session (the task hash when it has no session)
    KEYS[4] channel of the task's session (the task hash when it has no session)
    KEYS[5] owner's non-terminal tasks (zset)

    ARGV[1] task id
    ARGV[2] owner id of the caller ('' when the broker itself cancels)
    ARGV[3] status message
    ARGV[4] channel on which workers hear of cancelled tasks (payload: the task id; classic pub/sub, not a
            key: one channel for the whole deployment)
    ARGV[5] the cancelling pod's name for the task's trail ('' or absent for none; see includes/trail)

  Output:
    { 0, snapshot }     cancelled
    { -1 }              no such task, or another owner's task (indistinguishable on purpose)
    { -2, status }      the task is terminal already
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
if ARGV[2] ~= '' and task.owner ~= ARGV[2] then return { NOT_FOUND } end
if isTerminal(task.status) then return { TERMINAL, task.status } end

redis.call('ZREM', KEYS[5], ARGV[1])
local changed =
  changeTask(target, ARGV[1], task, { status = 'cancelled', statusMessage = ARGV[3], fpod = trailFinish(task, {}, ARGV[5]) })
-- Workers hear of cancellations on one channel per process, not one subscription per running job.
redis.call('PUBLISH', ARGV[4], ARGV[1])
return changed
