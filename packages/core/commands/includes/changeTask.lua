--- @include "includes/feed"

-- Publishes a task's snapshot on its channel and, when the client can see the change (`visible`) and the task
-- has a session, appends it to the session's feed (what its GET stream relays, resumably) and publishes it on
-- the session's channel.
local function publishSnapshot(taskKey, channel, snapshot, visible)
  redis.call('PUBLISH', channel, snapshot)
  if not visible then return end
  local notify = appendFeed(taskKey, 's', snapshot)
  if notify then redis.call('PUBLISH', notify, snapshot) end
end

-- Applies field changes to a live task, bumps its version, stamps lastUpdatedAt and publishes the new
-- snapshot; the session hears of it only when the status or status message changed (a new attempt of a
-- working task is news to workers and waiters, not a status notification). Returns { OK, snapshot }.
local function changeTask(taskKey, taskId, channel, fields)
  local before = redis.call('HMGET', taskKey, 'status', 'statusMessage')
  local visible = (fields.status ~= nil and fields.status ~= before[1])
    or (fields.statusMessage ~= nil and fields.statusMessage ~= before[2])
  local now = nowMs()
  local args = { 'lastUpdatedAt', tostring(now) }
  for field, value in pairs(fields) do
    args[#args + 1] = field
    args[#args + 1] = value
  end
  redis.call('HSET', taskKey, unpack(args))
  redis.call('HINCRBY', taskKey, 'version', 1)
  local snapshot = taskSnapshot(taskKey, taskId)
  publishSnapshot(taskKey, channel, snapshot, visible)
  return { OK, snapshot }
end
