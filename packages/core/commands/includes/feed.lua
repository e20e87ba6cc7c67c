--- @include "includes/expiry"

-- Appends one entry to a session's feed and keeps the feed at least as long as the task (unix ms
-- `expiresAt`) the entry is about.
local FEED_MAX_ENTRIES = 1000
local function appendFeedTo(feed, expiresAt, field, value)
  redis.call('XADD', feed, 'MAXLEN', '~', FEED_MAX_ENTRIES, '*', field, value)
  if expiresAt > 0 then keepUntil(feed, expiresAt) end
end

-- The expiry of a loaded task (unix ms): its `expiresAt` field, or the hash's own expiry.
local function expiryOf(taskKey, expiresAt)
  return tonumber(expiresAt) or redis.call('PEXPIRETIME', taskKey)
end

-- Appends one entry to the feed of the session that created a task, when the task has one (direct calls
-- do not). Returns the session's channel, or nil.
-- The feed's name comes from the task hash (like the channel's): the one key scripts reach outside KEYS.
local function appendFeed(taskKey, field, value)
  local target = redis.call('HMGET', taskKey, 'feed', 'notify', 'expiresAt')
  if not target[1] then return nil end
  appendFeedTo(target[1], expiryOf(taskKey, target[3]), field, value)
  return target[2]
end
