--[[
  Records the requestor's answer to a pending server-to-client request, once: the first answer wins, and
  only the owner of the task that asked may answer. Announces the answer to the waiting worker.

  Input:
    KEYS[1] input request hash

    ARGV[1] channel that announces the answer
    ARGV[2] owner id of the answering session
    ARGV[3] answer JSON: {"result": ...} or {"error": {...}}

  Output:
    { 0, taskId }       recorded
    { -1 }              no such request (unknown, expired, or another owner's)
    { -10 }             answered already
]]
--- @include "includes/codes"

local request = redis.call('HMGET', KEYS[1], 'owner', 'answer', 'taskId')
if not request[1] or request[1] ~= ARGV[2] then return { NOT_FOUND } end
if request[2] then return { ANSWERED } end

redis.call('HSET', KEYS[1], 'answer', ARGV[3])
redis.call('PUBLISH', ARGV[1], ARGV[3])
return { OK, request[3] }
