--[[
  working -> input_required: the task waits for an answer from the requestor.

  Input:
    KEYS[1] task hash

    ARGV[1] task id
    ARGV[2] channel
    ARGV[3] status message ('' keeps the current one)

  Output:
    { 0, snapshot }     moved
    { -1 }              no such task
    { -2, status }      the task is terminal
    { -3, status }      the task is not 'working'
]]
--- @include "includes/codes"
--- @include "includes/now"
--- @include "includes/snapshot"
--- @include "includes/changeTask"

local task = loadTask(KEYS[1])
if not task then return { NOT_FOUND } end
if isTerminal(task.status) then return { TERMINAL, task.status } end
if task.status ~= 'working' then return { ILLEGAL_TRANSITION, task.status } end

local fields = { status = 'input_required' }
if ARGV[3] ~= '' then fields.statusMessage = ARGV[3] end
return changeTask(KEYS[1], ARGV[1], ARGV[2], task, fields)
