--- @include "includes/now"

-- Appends one event to an SSE event log and returns its entry id. Entry ids are `<ms>-<n>`: the server's
-- clock (never going back) and the event's ordinal in its stream (1 = its first logged event), so a resumption
-- can tell whether events after the client's last one were trimmed away. Trims the log by length and by
-- age, and keeps the log and the stream's state for `retentionMs` after this event. `feed` (optional, not '')
-- is stored with the event as field `f`: on a session's GET stream, the session-feed position the stream had
-- processed when it wrote the event, so a replay interleaves the feed's status notifications as they went out.
-- `extra` (optional): state fields to set along (a flat list of field, value), in the same HSET.
local function appendEvent(logKey, stateKey, data, maxEvents, retentionMs, feed, extra)
  local now = nowMs()
  local last = tonumber(redis.call('HGET', stateKey, 'ms') or '0')
  if now < last then now = last end
  local n = redis.call('HINCRBY', stateKey, 'n', 1)
  local id
  if feed and feed ~= '' then
    id = redis.call('XADD', logKey, 'MAXLEN', '~', maxEvents, tostring(now) .. '-' .. n, 'd', data, 'f', feed)
  else
    id = redis.call('XADD', logKey, 'MAXLEN', '~', maxEvents, tostring(now) .. '-' .. n, 'd', data)
  end
  redis.call('XTRIM', logKey, 'MINID', '~', tostring(now - tonumber(retentionMs)))
  if extra and #extra > 0 then
    redis.call('HSET', stateKey, 'ms', tostring(now), unpack(extra))
  else
    redis.call('HSET', stateKey, 'ms', tostring(now))
  end
  redis.call('PEXPIRE', logKey, retentionMs)
  redis.call('PEXPIRE', stateKey, retentionMs)
  return id
end
