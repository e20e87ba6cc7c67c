--[[
  Records the requestor's answer to a pending server-to-client request, once: the first answer wins, and
  only the owner of the task that asked may answer. Announces the answer to the waiting worker.

  Input:
    KEYS[1] input request hash
    KEYS[2] channel that announces the answer

    ARGV[1] owner id of the answering session
    ARGV[2] answer JSON: {"result": ...} or {"error": {...}}

  Output:
    { 0, taskId }       recorded
    { -1 }              no such request (unknown, expired, or another owner's)
    { -10 }             answered already
]]
--- @include "includes/codes"

local request = redis.call('HMGET', KEYS[1], 'owner', 'answer', 'taskId')
if not request[1] or request[1] ~= ARGV[1] then return { NOT_FOUND } end
if request[2] then return { ANSWERED } end

redis.call('HSET', KEYS[1], 'answer', ARGV[2])
redis.call(SHARD_PUBLISH, KEYS[2], ARGV[2])
return { OK, request[3] }
