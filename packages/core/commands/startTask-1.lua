--[[
  Marks that an attempt to execute a live task has started (a worker took its job). A task that was
  waiting for input when its previous attempt died goes back to 'working'.

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

local status = redis.call('HGET', KEYS[1], 'status')
if not status then return { NOT_FOUND } end
if isTerminal(status) then return { TERMINAL, status } end

return changeTask(KEYS[1], ARGV[1], ARGV[2], { status = 'working', attempt = ARGV[3] })
