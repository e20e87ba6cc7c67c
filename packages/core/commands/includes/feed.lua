--- @include "includes/expiry"
--- @include "includes/target"

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

-- Appends one entry to the feed of the session that created a task (`target`: its keys, see taskTarget;
-- `feed` and `expiresAt`: from its record), when it has one (direct calls do not), and announces
-- `announcement` on the session's channel.
local function appendFeed(target, feed, expiresAt, field, value, announcement)
  if not feed then return end
  appendFeedTo(target.feed, expiryOf(target.key, expiresAt), field, value)
  redis.call(SHARD_PUBLISH, target.notify, announcement)
end
