--[[
  Claims, refreshes or releases the lease that names the one open GET stream of a session (a server must
  not send a message on two streams), and keeps the session alive while its stream is open.

  Input:
    KEYS[1] the session's stream lease (string: stream id)
    KEYS[2] session hash

    ARGV[1] 'claim', 'refresh' or 'release'
    ARGV[2] stream id
    ARGV[3] lease length (ms)
    ARGV[4] session idle expiry (ms)

  Output:
    { 0 }               claimed, refreshed or released
    { -1 }              the session does not exist (any lease of it is dropped)
    { -9 }              another stream holds the lease
]]
--- @include "includes/codes"

if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1])
  return { NOT_FOUND }
end

local holder = redis.call('GET', KEYS[1])
if ARGV[1] == 'release' then
  if holder == ARGV[2] then redis.call('DEL', KEYS[1]) end
  return { OK }
end
if holder and holder ~= ARGV[2] then return { NOT_HELD } end
if ARGV[1] == 'refresh' and not holder then return { NOT_HELD } end

redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return { OK }
