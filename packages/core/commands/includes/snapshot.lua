-- The fields of a task that status notifications and transition results carry (never the outcome).
local SNAPSHOT_FIELDS = {
  'status', 'statusMessage', 'createdAt', 'lastUpdatedAt', 'ttl', 'pollInterval', 'version', 'kind', 'session', 'tool'
}

-- JSON snapshot of a task hash, keyed by field name; absent fields are left out.
local function taskSnapshot(taskKey, taskId)
  local values = redis.call('HMGET', taskKey, unpack(SNAPSHOT_FIELDS))
  local snapshot = { taskId = taskId }
  for i, field in ipairs(SNAPSHOT_FIELDS) do
    if values[i] then snapshot[field] = values[i] end
  end
  return cjson.encode(snapshot)
end
