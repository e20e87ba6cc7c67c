--- @include "includes/feed"

-- Publishes a task's snapshot on its channel and, when the task has a session, appends it to the session's
-- feed (what its GET stream relays, resumably) and publishes it on the session's channel.
local function publishSnapshot(taskKey, channel, snapshot)
  redis.call('PUBLISH', channel, snapshot)
  local notify = appendFeed(taskKey, 's', snapshot)
  if notify then redis.call('PUBLISH', notify, snapshot) end
end

-- Applies field changes to a live task, bumps its version, stamps lastUpdatedAt and publishes the new
-- snapshot. Returns { OK, snapshot }.
local function changeTask(taskKey, taskId, channel, fields)
  local now = nowMs()
  local args = { 'lastUpdatedAt', tostring(now) }
  for field, value in pairs(fields) do
    args[#args + 1] = field
    args[#args + 1] = value
  end
  redis.call('HSET', taskKey, unpack(args))
  redis.call('HINCRBY', taskKey, 'version', 1)
  local snapshot = taskSnapshot(taskKey, taskId)
  publishSnapshot(taskKey, channel, snapshot)
  return { OK, snapshot }
end
