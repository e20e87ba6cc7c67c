--- @include "includes/target"

-- The fields of a task that status notifications and transition results carry (never the outcome;
-- `startedAt`, when the current attempt started, is the broker's own: the wire Task leaves it out).
local SNAPSHOT_FIELDS = {
  'status', 'statusMessage', 'createdAt', 'lastUpdatedAt', 'ttl', 'pollInterval', 'version', 'kind', 'session', 'tool',
  'startedAt'
}
-- What a transition reads of a task, in one HMGET: the snapshot's fields, the owner, its current attempt with
-- the trail of its starts (see includes/trail), and in records of earlier versions the names of its session's
-- feed and channel and its expiry (now derived: see sessionKeysOf and expiryFrom).
local LOAD_FIELDS = {
  'status', 'statusMessage', 'createdAt', 'lastUpdatedAt', 'ttl', 'pollInterval', 'version', 'kind', 'session', 'tool',
  'startedAt', 'owner', 'feed', 'notify', 'expiresAt', 'attempt', 'spod', 'starts'
}

-- The task's LOAD_FIELDS as a table (absent fields left out), with `feed`, `notify` (when it has a session)
-- and `expiresAt` filled in, or nil when there is no such task.
local function loadTask(taskKey)
  local values = redis.call('HMGET', taskKey, unpack(LOAD_FIELDS))
  if not values[1] then return nil end
  local task = {}
  for i, field in ipairs(LOAD_FIELDS) do
    if values[i] then task[field] = values[i] end
  end
  task.feed, task.notify = sessionKeysOf(taskKey, task.session, task.feed, task.notify)
  task.expiresAt = expiryFrom(task.createdAt, task.ttl, task.expiresAt)
  return task
end

-- JSON snapshot of a loaded (and possibly changed) task, keyed by field name; absent fields are left out.
local function encodeSnapshot(taskId, task)
  local snapshot = { taskId = taskId }
  for _, field in ipairs(SNAPSHOT_FIELDS) do
    if task[field] then snapshot[field] = task[field] end
  end
  return cjson.encode(snapshot)
end
