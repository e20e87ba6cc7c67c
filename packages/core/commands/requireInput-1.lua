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

local status = redis.call('HGET', KEYS[1], 'status')
if not status then return { NOT_FOUND } end
if isTerminal(status) then return { TERMINAL, status } end
if status ~= 'working' then return { ILLEGAL_TRANSITION, status } end

local fields = { status = 'input_required' }
if ARGV[3] ~= '' then fields.statusMessage = ARGV[3] end
return changeTask(KEYS[1], ARGV[1], ARGV[2], fields)
