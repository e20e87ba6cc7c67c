--- @include "includes/now"
--- @include "includes/feed"

-- Publishes a loaded task's snapshot on its channel and, when the task has a session whose GET stream made
-- its feed, appends it to that feed (what the GET stream relays, resumably) and announces the entry on the
-- session's channel (see appendFeed). `carried` (optional, JSON): the outcome a finish stored, added to
-- the task channel's message only, as its `outcome` field: the waiters of the task answer from it without
-- reading it back.
local function publishSnapshot(target, task, snapshot, carried)
  local message = snapshot
  if carried then message = string.sub(snapshot, 1, -2) .. ',"outcome":' .. carried .. '}' end
  redis.call(SHARD_PUBLISH, target.channel, message)
  appendFeed(target, task.feed, task.expiresAt, 's', snapshot)
end

-- Applies field changes to a live task loaded with `loadTask` (`target`: its keys, see taskTarget). A change
-- the client can see (status or status message) bumps the version, stamps lastUpdatedAt and publishes the new
-- snapshot (see publishSnapshot); any other (a new attempt of a working task) only writes its fields. `now`
-- (ms, optional) is the Redis time the caller read already, or as a process follows it, which may differ from
-- `TIME` by a round trip: each visible change's lastUpdatedAt is at least 1 ms after the last one, so it grows
-- with the version whichever clock stamped either; `carried` (optional) see publishSnapshot.
-- Returns { OK, snapshot }.
local function changeTask(target, taskId, task, fields, now, carried)
  local visible = (fields.status ~= nil and fields.status ~= task.status)
    or (fields.statusMessage ~= nil and fields.statusMessage ~= task.statusMessage)
  local args = {}
  if visible then
    task.lastUpdatedAt = tostring(math.max(now or nowMs(), (tonumber(task.lastUpdatedAt) or 0) + 1))
    task.version = tostring((tonumber(task.version) or 0) + 1)
    args = { 'lastUpdatedAt', task.lastUpdatedAt, 'version', task.version }
  end
  for field, value in pairs(fields) do
    args[#args + 1] = field
    args[#args + 1] = value
    task[field] = value
  end
  if #args > 0 then redis.call('HSET', target.key, unpack(args)) end
  local snapshot = encodeSnapshot(taskId, task)
  if visible then publishSnapshot(target, task, snapshot, carried) end
  return { OK, snapshot }
end
