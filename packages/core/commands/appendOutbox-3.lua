--[[
  Appends a server-to-client message to a live task's outbox and announces it. The outbox lives exactly
  as long as its task and keeps at most a bounded number of entries. When no stream carries the task's
  outbox (no tasks/result stream is open for it), the arrival also goes on the feed of the task's session,
  so that its GET stream delivers the message instead (INP-5).

  Input:
    KEYS[1] task hash
    KEYS[2] task outbox (stream)
    KEYS[3] the task's carrier lease (string: id of the stream that carries the outbox)

    ARGV[1] channel that announces new entries
    ARGV[2] message JSON
    ARGV[3] approximate maximum number of entries kept
    ARGV[4] task id

  Output:
    { 0, entryId }      appended
    { -1 }              no such task
]]
--- @include "includes/codes"
--- @include "includes/feed"

local expiresAt = redis.call('PEXPIRETIME', KEYS[1])
if expiresAt < 0 then return { NOT_FOUND } end

local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'm', ARGV[2])
redis.call('PEXPIREAT', KEYS[2], expiresAt)
redis.call('PUBLISH', ARGV[1], id)
if redis.call('EXISTS', KEYS[3]) == 0 then
  local notify = appendFeed(KEYS[1], 'o', ARGV[4])
  if notify then redis.call('PUBLISH', notify, cjson.encode({ outbox = ARGV[4] })) end
end
return { OK, id }
