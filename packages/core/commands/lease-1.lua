--[[
  Takes, claims, refreshes or releases a lease: a string naming its holder that expires unless refreshed.
  Used for the connection that carries an SSE stream ('take': a resumption wins over a stale connection).

  Input:
    KEYS[1] the lease (string: holder)

    ARGV[1] 'take' (whoever holds it), 'claim' (free or ours), 'refresh' (ours) or 'release' (ours)
    ARGV[2] holder
    ARGV[3] lease length (ms)

  Output:
    { 0 }               done
    { -9 }              another holder has it (claim, refresh), or nobody does (refresh)
]]
--- @include "includes/codes"

local holder = redis.call('GET', KEYS[1])
if ARGV[1] == 'release' then
  if holder == ARGV[2] then redis.call('DEL', KEYS[1]) end
  return { OK }
end
if ARGV[1] == 'claim' and holder and holder ~= ARGV[2] then return { NOT_HELD } end
if ARGV[1] == 'refresh' and holder ~= ARGV[2] then return { NOT_HELD } end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return { OK }
