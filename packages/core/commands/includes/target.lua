-- The keys a task's transition writes besides the task hash, as the caller passed them in KEYS from
-- `first` on: the task's channel, and the feed and channel of the session that created the task (a task
-- without a session passes its own key for both). Every key is in KEYS, and all share the task's slot.
local function taskTarget(first)
  return { key = KEYS[first], channel = KEYS[first + 1], feed = KEYS[first + 2], notify = KEYS[first + 3] }
end

-- The feed and channel of the session (`session`: the digest of its id) that created the task whose hash is
-- `taskKey`: built from the task's slot, as Keys.sessionFeedOf and Keys.sessionChannelOf build them. Records
-- written before they were derived name them in fields `feed` and `notify`, which win (`feed`, `notify`).
local function sessionKeysOf(taskKey, session, feed, notify)
  if feed or not session then return feed, notify end
  local slot = string.match(taskKey, '^(.*}):task:')
  return slot .. ':session:' .. session .. ':feed', slot .. ':ch:session:' .. session
end

-- A task's expiry (unix ms, as a string): createdAt + ttl, or the `expiresAt` field of older records.
local function expiryFrom(createdAt, ttl, expiresAt)
  if expiresAt or not createdAt or not ttl then return expiresAt end
  return tostring(tonumber(createdAt) + tonumber(ttl))
end

-- True when the session keys the caller passed are the ones the task's record names (`feed`, `notify`).
local function sessionKeysMatch(target, feed, notify)
  if feed then return feed == target.feed and notify == target.notify end
  return target.feed == target.key and target.notify == target.key
end
