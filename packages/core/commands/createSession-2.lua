--[[
  Stores a new MCP session of a principal and indexes it under the principal, unless the principal already has
  the maximum number of live sessions. A session counts until its index entry's expiry (its idle expiry, pushed
  back when the session is used); entries of sessions that expired or idled out are pruned here.

  Input:
    KEYS[1] session hash
    KEYS[2] the principal's sessions (zset: session digest, score = idle expiry ms)

    ARGV[1] session digest (the index member)
    ARGV[2] idle ttl (ms)
    ARGV[3] max sessions per principal (0 = unlimited)
    ARGV[4] JSON object of the session's fields

  Output:
    { 0 }               created
    { -4, live }        the principal is at the limit
]]
--- @include "includes/codes"
--- @include "includes/now"

local now = nowMs()
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if limit > 0 then
  local live = redis.call('ZCARD', KEYS[2])
  if live >= limit then return { LIMIT_EXCEEDED, live } end
end

local fields = {}
for field, value in pairs(cjson.decode(ARGV[4])) do
  fields[#fields + 1] = field
  fields[#fields + 1] = tostring(value)
end
local idle = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('PEXPIRE', KEYS[1], idle)
redis.call('ZADD', KEYS[2], now + idle, ARGV[1])
redis.call('PEXPIRE', KEYS[2], idle)
return { OK }
