-- The keys a task's transition writes besides the task hash, as the caller passed them in KEYS from
-- `first` on: the task's channel, and the feed and channel of the session that created the task (a task
-- without a session passes its own key for both). Every key is in KEYS, and all share the task's slot.
local function taskTarget(first)
  return { key = KEYS[first], channel = KEYS[first + 1], feed = KEYS[first + 2], notify = KEYS[first + 3] }
end

-- True when the session keys the caller passed are the ones the task's record names (`feed`, `notify`).
local function sessionKeysMatch(target, feed, notify)
  if feed then return feed == target.feed and notify == target.notify end
  return target.feed == target.key and target.notify == target.key
end
