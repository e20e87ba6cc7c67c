--[[
  Replaces the status message of a live task without changing its status.

  Input:
    KEYS[1] task hash

    ARGV[1] task id
    ARGV[2] channel
    ARGV[3] status message

  Output:
    { 0, snapshot }     changed
    { -1 }              no such task
    { -2, status }      the task is terminal
]]
--- @include "includes/codes"
--- @include "includes/now"
--- @include "includes/snapshot"
--- @include "includes/changeTask"

local status = redis.call('HGET', KEYS[1], 'status')
if not status then return { NOT_FOUND } end
if isTerminal(status) then return { TERMINAL, status } end

return changeTask(KEYS[1], ARGV[1], ARGV[2], { statusMessage = ARGV[3] })
