--[[
  Moves one entry of a task's outbox onto an SSE stream, exactly once across all streams: only the
  connection that holds the stream may write; only the stream that carries the task's outbox (mode
  'carrier'), or the session's GET stream while no stream carries it (mode 'fallback'), may take it; and
  the task's relay cursor moves past it in the same step, so no other stream takes it again. For an input
  request, records which stream took it.

  Input:
    KEYS[1] event log (stream)
    KEYS[2] the stream's connection lease (string: connection id)
    KEYS[3] the stream's state (hash)
    KEYS[4] the task's carrier lease (string: stream id)
    KEYS[5] the task's relay state (hash: cursor = last outbox entry taken, <requestId> = stream id)

    ARGV[1] connection id
    ARGV[2] stream id
    ARGV[3] 'carrier' or 'fallback'
    ARGV[4] outbox entry id
    ARGV[5] event data (a JSON-RPC message), or '' to pass the entry over without an event
    ARGV[6] approximate maximum number of events kept
    ARGV[7] retention of the event log (ms)
    ARGV[8] when the relay state expires (unix ms: the task's expiry)
    ARGV[9] input request id of the entry ('' for other messages)
    ARGV[10] the session-feed position to store with the event ('' for none: see includes/eventLog)

  Output:
    { 0, entryId }      relayed ('' as entryId when passed over)
    { -6 }              the connection does not hold the stream
    { -7 }              this stream may not take the task's outbox now
    { -8 }              the cursor is at or past this entry already
]]
--- @include "includes/codes"
--- @include "includes/eventLog"

if redis.call('GET', KEYS[2]) ~= ARGV[1] then return { FENCED } end
local carrier = redis.call('GET', KEYS[4])
if ARGV[3] == 'carrier' and carrier ~= ARGV[2] then return { NOT_CARRIER } end
if ARGV[3] == 'fallback' and carrier then return { NOT_CARRIER } end

-- Stream entry ids compare by their two numbers (both below 2^53, exact in Lua's doubles).
local function parts(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local cursorMs, cursorSeq = parts(redis.call('HGET', KEYS[5], 'cursor') or '0-0')
local entryMs, entrySeq = parts(ARGV[4])
if entryMs < cursorMs or (entryMs == cursorMs and entrySeq <= cursorSeq) then return { STALE } end

redis.call('HSET', KEYS[5], 'cursor', ARGV[4])
if ARGV[9] ~= '' and ARGV[5] ~= '' then redis.call('HSET', KEYS[5], ARGV[9], ARGV[2]) end
redis.call('PEXPIREAT', KEYS[5], ARGV[8])
if ARGV[5] == '' then return { OK, '' } end
return { OK, appendEvent(KEYS[1], KEYS[3], ARGV[5], ARGV[6], ARGV[7], ARGV[10]) }
