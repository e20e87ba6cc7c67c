--- @include "includes/expiry"
--- @include "includes/target"

-- Most entries a session's feed keeps (XADD MAXLEN ~).
local FEED_MAX_ENTRIES = 1000

-- Appends one entry to a session's feed, if the feed exists, and keeps it at least as long as the task (unix
-- ms `expiresAt`) the entry is about. A feed exists once the session's GET stream opened (streamLease creates
-- it): before that nobody could read an entry (a new GET stream starts at the head), so none is written, and
-- a task of a session without a GET stream costs no feed. Returns true when it appended.
local function appendFeedTo(feed, expiresAt, field, value)
  if not redis.call('XADD', feed, 'NOMKSTREAM', 'MAXLEN', '~', FEED_MAX_ENTRIES, '*', field, value) then
    return false
  end
  if expiresAt > 0 then keepUntil(feed, expiresAt) end
  return true
end

-- The expiry of a loaded task (unix ms): its `expiresAt` field, or the hash's own expiry.
local function expiryOf(taskKey, expiresAt)
  return tonumber(expiresAt) or redis.call('PEXPIRETIME', taskKey)
end

-- Appends one entry to the feed of the session that created a task (`target`: its keys, see taskTarget;
-- `feed` and `expiresAt`: from its record), when it has one (direct calls do not), and announces
-- `announcement` on the session's channel (only its GET stream listens there: none without a feed).
local function appendFeed(target, feed, expiresAt, field, value, announcement)
  if not feed then return end
  if appendFeedTo(target.feed, expiryOf(target.key, expiresAt), field, value) then
    redis.call(SHARD_PUBLISH, target.notify, announcement)
  end
end
