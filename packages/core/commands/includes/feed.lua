-- Appends one entry to the feed of the session that created a task, when the task has one (direct calls
-- do not), and keeps the feed at least as long as the task. Returns the session's channel, or nil.
-- The feed's name comes from the task hash (like the channel's): the one key scripts reach outside KEYS.
local FEED_MAX_ENTRIES = 1000
local function appendFeed(taskKey, field, value)
  local target = redis.call('HMGET', taskKey, 'feed', 'notify')
  if not target[1] then return nil end
  redis.call('XADD', target[1], 'MAXLEN', '~', FEED_MAX_ENTRIES, '*', field, value)
  local taskExpiry = redis.call('PEXPIRETIME', taskKey)
  if taskExpiry > 0 and redis.call('PEXPIRETIME', target[1]) < taskExpiry then
    redis.call('PEXPIREAT', target[1], taskExpiry)
  end
  return target[2]
end
