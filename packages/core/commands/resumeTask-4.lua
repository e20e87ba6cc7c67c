--[[
  input_required -> working: the input the task waited for has arrived.

  Input:
    KEYS[1] task hash
    KEYS[2] the task's channel
    KEYS[3] feed of the task's session (the task hash when it has no session)
    KEYS[4] channel of the task's session (the task hash when it has no session)

    ARGV[1] task id
    ARGV[2] status message ('' keeps the current one)

  Output:
    { 0, snapshot }     moved
    { -1 }              no such task
    { -2, status }      the task is terminal
    { -3, status }      the task is not 'input_required'
    { -11 }             KEYS[3..4] are not the task's session keys
]]
--- @include "includes/codes"
--- @include "includes/now"
--- @include "includes/snapshot"
--- @include "includes/changeTask"

local target = taskTarget(1)
local task = loadTask(target.key)
if not task then return { NOT_FOUND } end
if not sessionKeysMatch(target, task.feed, task.notify) then return { WRONG_SESSION_KEYS } end
if isTerminal(task.status) then return { TERMINAL, task.status } end
if task.status ~= 'input_required' then return { ILLEGAL_TRANSITION, task.status } end

local fields = { status = 'working' }
if ARGV[2] ~= '' then fields.statusMessage = ARGV[2] end
return changeTask(target, ARGV[1], task, fields)
