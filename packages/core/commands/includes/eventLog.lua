--- @include "includes/now"

-- Appends one event to an SSE event log and returns its entry id. Entry ids are `<ms>-<n>`: the server's
-- clock (never going back) and the event's ordinal in its stream (1 = the priming event), so a resumption
-- can tell whether events after the client's last one were trimmed away. Trims the log by length and by
-- age, and keeps the log and the stream's state for `retentionMs` after this event.
local function appendEvent(logKey, stateKey, data, maxEvents, retentionMs)
  local now = nowMs()
  local last = tonumber(redis.call('HGET', stateKey, 'ms') or '0')
  if now < last then now = last end
  local n = redis.call('HINCRBY', stateKey, 'n', 1)
  local id = redis.call('XADD', logKey, 'MAXLEN', '~', maxEvents, tostring(now) .. '-' .. n, 'd', data)
  redis.call('XTRIM', logKey, 'MINID', '~', tostring(now - tonumber(retentionMs)))
  redis.call('HSET', stateKey, 'ms', tostring(now))
  redis.call('PEXPIRE', logKey, retentionMs)
  redis.call('PEXPIRE', stateKey, retentionMs)
  return id
end
