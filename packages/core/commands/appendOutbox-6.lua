--[[
  Appends a server-to-client message to a live task's outbox and announces it. The outbox lives exactly
  as long as its task and keeps at most a bounded number of entries. When no stream carries the task's
  outbox (no tasks/result stream is open for it), the arrival also goes on the feed of the task's session,
  so that its GET stream delivers the message instead (INP-5).

  Each append carries an id of its own; the task's `outboxLast` field keeps the last one with its entry id.
  An append that comes again (a client resends a command whose reply a connection reset lost, though the
  script ran) is recognised and answered with the entry it made the first time, not appended twice. One
  execution appends in order and one at a time, so only the last append can come again.

  Input:
    KEYS[1] task hash
    KEYS[2] task outbox (stream)
    KEYS[3] the task's carrier lease (string: id of the stream that carries the outbox)
    KEYS[4] the task's channel, which announces new entries too (payload: the entry id, not a JSON snapshot)
    KEYS[5] feed of the task's session (the task hash when it has no session)
    KEYS[6] channel of the task's session (the task hash when it has no session)

    ARGV[1] message JSON
    ARGV[2] approximate maximum number of entries kept
    ARGV[3] task id
    ARGV[4] the append's own id (random)

  Output:
    { 0, entryId }      appended (now, or by the same append before)
    { -1 }              no such task
    { -11 }             KEYS[5..6] are not the task's session keys
]]
--- @include "includes/codes"
--- @include "includes/feed"

local expiresAt = redis.call('PEXPIRETIME', KEYS[1])
if expiresAt < 0 then return { NOT_FOUND } end
local target = { key = KEYS[1], feed = KEYS[5], notify = KEYS[6] }
local record = redis.call('HMGET', KEYS[1], 'session', 'outboxLast', 'feed', 'notify')
local feed, notify = sessionKeysOf(KEYS[1], record[1], record[3], record[4])
if not sessionKeysMatch(target, feed, notify) then return { WRONG_SESSION_KEYS } end
if record[2] then
  local appendId, entryId = string.match(record[2], '^(%S+) (%S+)$')
  if appendId == ARGV[4] then return { OK, entryId } end
end

local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'm', ARGV[1])
redis.call('HSET', KEYS[1], 'outboxLast', ARGV[4] .. ' ' .. id)
redis.call('PEXPIREAT', KEYS[2], expiresAt)
redis.call(SHARD_PUBLISH, KEYS[4], id)
if redis.call('EXISTS', KEYS[3]) == 0 then
  appendFeed(target, feed, expiresAt, 'o', ARGV[3])
end
return { OK, id }
