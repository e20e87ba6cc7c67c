--[[
  One page of an owner's task index, in index order (expiry, then id), after a keyset position.
  Prunes entries whose expiry has passed first. Returns one entry more than the page size when more follow.

  Input:
    KEYS[1] owner's tasks (zset, score = expiry ms)

    ARGV[1] page size
    ARGV[2] score of the last entry of the previous page ('' for the first page)
    ARGV[3] id of the last entry of the previous page

  Output:
    { id1, score1, id2, score2, ... }
]]
--- @include "includes/now"

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs())
local size = tonumber(ARGV[1])
if ARGV[2] == '' then
  return redis.call('ZRANGE', KEYS[1], 0, size, 'WITHSCORES')
end

-- Fast path: the previous page's last entry is still there, so continue right after it.
local rank = redis.call('ZRANK', KEYS[1], ARGV[3])
if rank then
  return redis.call('ZRANGE', KEYS[1], rank + 1, rank + 1 + size, 'WITHSCORES')
end

-- True when id a sorts after id b the way Redis orders members of equal score: by bytes. Lua's own string
-- comparison follows the server's LC_COLLATE locale (Redis calls setlocale), which may order them differently.
local function sortsAfter(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

-- It was pruned: start at its score and skip the entries that sorted before it (same score, smaller id).
local afterScore = tonumber(ARGV[2])
local ties = redis.call('ZCOUNT', KEYS[1], ARGV[2], ARGV[2])
local candidates = redis.call('ZRANGE', KEYS[1], ARGV[2], '+inf', 'BYSCORE', 'LIMIT', 0, size + 1 + ties, 'WITHSCORES')
local page = {}
for i = 1, #candidates, 2 do
  local id, score = candidates[i], candidates[i + 1]
  if (tonumber(score) > afterScore or sortsAfter(id, ARGV[3])) and #page < (size + 1) * 2 then
    page[#page + 1] = id
    page[#page + 1] = score
  end
end
return page
