--[[
  working | input_required -> cancelled, on behalf of the task's owner.

  Input:
    KEYS[1] task hash
    KEYS[2] owner's non-terminal tasks (zset)

    ARGV[1] task id
    ARGV[2] channel
    ARGV[3] owner id of the caller ('' when the broker itself cancels)
    ARGV[4] status message

  Output:
    { 0, snapshot }     cancelled
    { -1 }              no such task, or another owner's task (indistinguishable on purpose)
    { -2, status }      the task is terminal already
]]
--- @include "includes/codes"
--- @include "includes/now"
--- @include "includes/snapshot"
--- @include "includes/changeTask"

local task = redis.call('HMGET', KEYS[1], 'status', 'owner')
local status = task[1]
if not status then return { NOT_FOUND } end
if ARGV[3] ~= '' and task[2] ~= ARGV[3] then return { NOT_FOUND } end
if isTerminal(status) then return { TERMINAL, status } end

redis.call('ZREM', KEYS[2], ARGV[1])
return changeTask(KEYS[1], ARGV[1], ARGV[2], { status = 'cancelled', statusMessage = ARGV[4] })
