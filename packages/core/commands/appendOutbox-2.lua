--[[
  Appends a server-to-client message to a live task's outbox and announces it. The outbox lives exactly
  as long as its task and keeps at most a bounded number of entries.

  Input:
    KEYS[1] task hash
    KEYS[2] task outbox (stream)

    ARGV[1] channel that announces new entries
    ARGV[2] message JSON
    ARGV[3] approximate maximum number of entries kept

  Output:
    { 0, entryId }      appended
    { -1 }              no such task
]]
--- @include "includes/codes"

local expiresAt = redis.call('PEXPIRETIME', KEYS[1])
if expiresAt < 0 then return { NOT_FOUND } end

local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'm', ARGV[2])
redis.call('PEXPIREAT', KEYS[2], expiresAt)
redis.call('PUBLISH', ARGV[1], id)
return { OK, id }
