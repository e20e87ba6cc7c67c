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

local task = loadTask(KEYS[1])
if not task then return { NOT_FOUND } end
if isTerminal(task.status) then return { TERMINAL, task.status } end

return changeTask(KEYS[1], ARGV[1], ARGV[2], task, { statusMessage = ARGV[3] })
