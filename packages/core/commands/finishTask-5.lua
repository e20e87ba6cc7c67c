--[[
  working | input_required -> completed | failed, storing the exact outcome that tasks/result returns.
  A task that is already terminal (cancelled, say) keeps its status and outcome.

  Input:
    KEYS[1] task hash
    KEYS[2] the task's channel
    KEYS[3] feed of the task's session (the task hash when it has no session)
    KEYS[4] channel of the task's session (the task hash when it has no session)
    KEYS[5] owner's non-terminal tasks (zset)

    ARGV[1] task id
    ARGV[2] 'completed' or 'failed'
    ARGV[3] outcome JSON: {"result": ...} or {"error": {...}}
    ARGV[4] status message ('' for none)
    ARGV[5] the finishing pod's name for the task's trail ('' or absent for none; see includes/trail)
    ARGV[6] when the tool's result was handed over (unix ms, the Redis clock as the finishing process follows
            it, see RedisClock; '' or absent: the server's TIME): the record's lastUpdatedAt, never before the
            execution's start or the record's last change

  Output:
    { 0, snapshot }     finished
    { -1 }              no such task
    { -2, status }      the task was terminal already
    { -3, status }      ARGV[2] is not a finishing status
    { -11 }             KEYS[3..4] are not the task's session keys

  The task channel's message carries the outcome (`outcome`, as stored) when it is at most
  CARRIED_OUTCOME_BYTES long: the task's waiters answer from the message, with no read per waiter.
]]
--- @include "includes/codes"
--- @include "includes/snapshot"
--- @include "includes/changeTask"
--- @include "includes/trail"

-- Longest outcome (bytes of JSON) the task channel's message carries: larger ones are read by each waiter.
local CARRIED_OUTCOME_BYTES = 8192

local target = taskTarget(1)
local task = loadTask(target.key)
if not task then return { NOT_FOUND } end
if not sessionKeysMatch(target, task.feed, task.notify) then return { WRONG_SESSION_KEYS } end
if isTerminal(task.status) then return { TERMINAL, task.status } end
if ARGV[2] ~= 'completed' and ARGV[2] ~= 'failed' then return { ILLEGAL_TRANSITION, task.status } end

redis.call('ZREM', KEYS[5], ARGV[1])
local fields = { status = ARGV[2], outcome = ARGV[3] }
if ARGV[4] ~= '' then fields.statusMessage = ARGV[4] end
-- A finish by the pod that started the attempt (the usual case) writes no `fpod` (see includes/trail).
fields.fpod = trailFinish(task, fields, ARGV[5])
local now = math.max(tonumber(ARGV[6]) or nowMs(), tonumber(task.startedAt) or 0)
local carried = nil
if #ARGV[3] <= CARRIED_OUTCOME_BYTES then carried = ARGV[3] end
return changeTask(target, ARGV[1], task, fields, now, carried)
