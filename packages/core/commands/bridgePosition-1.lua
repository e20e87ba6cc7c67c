--[[
  The bridge's position in one existing queue's event stream, and the lease of the replica that follows it.
  One hash: `holder`, `until` (ms, Redis clock), `position` (the last applied stream entry id).

  Input:
    KEYS[1] the position hash

    ARGV[1] 'hold' (take the lease if free, lapsed or ours; renew it), 'advance' (ours: move the position
            forward to ARGV[4] and renew), or 'release' (ours)
    ARGV[2] holder
    ARGV[3] lease length (ms)
    ARGV[4] stream entry id (advance)

  Output:
    { 0, position }     done ('hold': the stored position, '' when none)
    { -8 }              advance: the position is at or past ARGV[4] already (applied before)
    { -9 }              another replica holds the lease
]]
--- @include "includes/codes"
--- @include "includes/now"

local function after(a, b)
  local am, as = string.match(a, '^(%d+)-(%d+)$')
  local bm, bs = string.match(b, '^(%d+)-(%d+)$')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  if am ~= bm then return am > bm end
  return as > bs
end

local now = nowMs()
local fields = redis.call('HMGET', KEYS[1], 'holder', 'until', 'position')
local holder, expires, position = fields[1], tonumber(fields[2] or '0'), fields[3]
local ours = holder == ARGV[2] and expires >= now

if ARGV[1] == 'release' then
  if ours then redis.call('HSET', KEYS[1], 'until', '0') end
  return { OK }
end
if ARGV[1] == 'hold' then
  if holder and holder ~= ARGV[2] and expires >= now then return { NOT_HELD } end
  redis.call('HSET', KEYS[1], 'holder', ARGV[2], 'until', tostring(now + tonumber(ARGV[3])))
  return { OK, position or '' }
end
if not ours then return { NOT_HELD } end
if position and not after(ARGV[4], position) then return { STALE } end
redis.call('HSET', KEYS[1], 'position', ARGV[4], 'until', tostring(now + tonumber(ARGV[3])))
return { OK }
