-- The Redis server's clock in ms: one clock for every pod, whatever their own clocks say.
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
