--[[
  Claims, refreshes or releases the lease that names the one open GET stream of a session (a server must
  not send a message on two streams), and keeps the session alive while its stream is open. A claim or
  refresh also makes sure the session's feed exists and lives at least as long as the session: the task
  scripts append to a feed only when it exists (XADD NOMKSTREAM), so a session that never opened a GET stream
  keeps no feed at all (nobody could read it: a new GET stream starts at the feed's head).

  Input:
    KEYS[1] the session's stream lease (string: stream id)
    KEYS[2] session hash
    KEYS[3] the session's feed (stream)

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
--- @include "includes/now"
--- @include "includes/feed"

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
local alive = nowMs() + tonumber(ARGV[4])
if redis.call('EXISTS', KEYS[3]) == 0 then
  -- A marker entry (field 'm': readers skip it) creates the feed; its id is where a new stream starts.
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', FEED_MAX_ENTRIES, '*', 'm', '')
  redis.call('PEXPIREAT', KEYS[3], alive)
else
  keepUntil(KEYS[3], alive)
end
return { OK }
