-- Applies field changes to a live task, bumps its version, stamps lastUpdatedAt and publishes the new
-- snapshot on the task's channel. Returns { OK, snapshot }.
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
  redis.call('PUBLISH', channel, snapshot)
  return { OK, snapshot }
end
