--[[
  Claims, refreshes or releases the lease that makes one stream the carrier of a task's outbox ("a
  tasks/result stream is open for this task"), on behalf of the connection that holds that stream, so a
  connection that lost its stream to a resumption can neither keep nor drop the lease of its successor.
  Releasing the lease of a live task also puts an outbox arrival on the task's session feed, so the
  session's GET stream takes over whatever the released stream left undelivered (INP-5).

  Input:
    KEYS[1] the task's carrier lease (string: stream id)
    KEYS[2] the stream's connection lease (string: connection id)
    KEYS[3] task hash
    KEYS[4] feed of the task's session (the task hash when it has no session)
    KEYS[5] channel of the task's session (the task hash when it has no session)

    ARGV[1] 'claim' (free or ours), 'refresh' (ours; also extends the connection lease, KEYS[2], by the same
            length: a carrying stream's heartbeat is this one script) or 'release' (ours)
    ARGV[2] stream id
    ARGV[3] connection id
    ARGV[4] lease length (ms)
    ARGV[5] task id

  Output:
    { 0 }               claimed, refreshed or released
    { -9 }              another stream carries the task (claim, refresh), or none does (refresh, release);
                        a refresh extended the connection lease all the same
    { -6 }              the connection does not hold the stream
    { -11 }             KEYS[4..5] are not the task's session keys (release)
]]
--- @include "includes/codes"
--- @include "includes/feed"

if redis.call('GET', KEYS[2]) ~= ARGV[3] then return { FENCED } end
if ARGV[1] == 'refresh' then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
local carrier = redis.call('GET', KEYS[1])
if ARGV[1] == 'release' then
  if carrier ~= ARGV[2] then return { NOT_HELD } end
  local record = redis.call('HMGET', KEYS[3], 'status', 'session', 'createdAt', 'ttl', 'feed', 'notify', 'expiresAt')
  if record[1] and not isTerminal(record[1]) then
    local target = { key = KEYS[3], feed = KEYS[4], notify = KEYS[5] }
    local feed, notify = sessionKeysOf(KEYS[3], record[2], record[5], record[6])
    if not sessionKeysMatch(target, feed, notify) then return { WRONG_SESSION_KEYS } end
    appendFeed(target, feed, expiryFrom(record[3], record[4], record[7]), 'o', ARGV[5])
  end
  redis.call('DEL', KEYS[1])
  return { OK }
end
if carrier and carrier ~= ARGV[2] then return { NOT_HELD } end
if ARGV[1] == 'refresh' and not carrier then return { NOT_HELD } end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[4])
return { OK }
