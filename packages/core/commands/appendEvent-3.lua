--[[
  Appends one SSE event to a stream's event log on behalf of the connection that holds the stream: a
  connection that lost the stream to a resumption elsewhere is refused, so a stream has one writer at a
  time. Records stream state (e.g. that the response went out) in the same step, so a resumption on another
  pod continues exactly where this one stopped. Also keeps a stream alive without an event ('touch': a GET
  stream, whose status notifications are not logged, at every heartbeat).

  Input:
    KEYS[1] event log (stream)
    KEYS[2] the stream's connection lease (string: connection id)
    KEYS[3] the stream's state (hash)

    ARGV[1] connection id
    ARGV[2] event data (a JSON-RPC message, or '' for a priming event)
    ARGV[3] approximate maximum number of events kept
    ARGV[4] retention (ms): events older than this are trimmed; the log expires this long after its last event
    ARGV[5] JSON object of state fields to set along ('{}' for none)
    ARGV[6] 'event' to append the event, 'state' to set only the state fields (no event), 'touch' to extend
            the connection lease by ARGV[8] ms and the log and state by the retention (no event)
    ARGV[7] 'event': the session-feed position to store with the event ('' for none; see includes/eventLog)
    ARGV[8] 'touch': the connection lease length (ms)

  Output:
    { 0, entryId }      appended ('' as entryId for 'state' and 'touch')
    { -6 }              the connection does not hold the stream
]]
--- @include "includes/codes"
--- @include "includes/eventLog"

if redis.call('GET', KEYS[2]) ~= ARGV[1] then return { FENCED } end
if ARGV[6] == 'touch' then
  redis.call('PEXPIRE', KEYS[2], ARGV[8])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
  return { OK, '' }
end
local fields = {}
for field, value in pairs(cjson.decode(ARGV[5])) do
  fields[#fields + 1] = field
  fields[#fields + 1] = tostring(value)
end
if ARGV[6] == 'event' then return { OK, appendEvent(KEYS[1], KEYS[3], ARGV[2], ARGV[3], ARGV[4], ARGV[7], fields) } end
if #fields > 0 then redis.call('HSET', KEYS[3], unpack(fields)) end
return { OK, '' }
