--- @include "includes/expiry"
--- @include "includes/target"

-- Most entries a session's feed keeps (XADD MAXLEN ~).
local FEED_MAX_ENTRIES = 1000

-- Appends one entry to a session's feed, if the feed exists, and keeps it at least as long as the task (unix
-- ms `expiresAt`) the entry is about. A feed exists once the session's GET stream opened (streamLease creates
-- it): before that nobody could read an entry (a new GET stream starts at the head), so none is written, and
-- a task of a session without a GET stream costs no feed. Returns the entry's announcement for the session's
-- channel, `feed <id> <id of the entry before> <field> <value>` (read by `announcedEntry` in core), or false
-- when it appended nothing.
local function appendFeedTo(feed, expiresAt, field, value)
  local id = redis.call('XADD', feed, 'NOMKSTREAM', 'MAXLEN', '~', FEED_MAX_ENTRIES, '*', field, value)
  if not id then return false end
  if expiresAt > 0 then keepUntil(feed, expiresAt) end
  -- The entry before it: a GET stream that stands there relays this one from the announcement alone.
  local around = redis.call('XREVRANGE', feed, id, '-', 'COUNT', 2)
  local before = around[2] and around[2][1] or '0-0'
  return 'feed ' .. id .. ' ' .. before .. ' ' .. field .. ' ' .. value
end

-- The expiry of a loaded task (unix ms): its `expiresAt` field, or the hash's own expiry.
local function expiryOf(taskKey, expiresAt)
  return tonumber(expiresAt) or redis.call('PEXPIRETIME', taskKey)
end

-- Appends one entry to the feed of the session that created a task (`target`: its keys, see taskTarget;
-- `feed` and `expiresAt`: from its record), when it has one (direct calls do not), and announces it on the
-- session's channel (only its GET stream listens there: none without a feed).
local function appendFeed(target, feed, expiresAt, field, value)
  if not feed then return end
  local announcement = appendFeedTo(target.feed, expiryOf(target.key, expiresAt), field, value)
  if announcement then redis.call(SHARD_PUBLISH, target.notify, announcement) end
end
