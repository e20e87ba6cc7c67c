--[[
  Ends a tasks/result or direct-call stream whose task is terminal, in one step: logs its last event (the
  response; or none, for a call the client cancelled) with the state fields that say so (`done`), then gives
  up the stream's connection lease and, when this stream carries the task's outbox, the task's carrier lease.
  Nothing is left to hand over to the session's GET stream: the caller drained the outbox of a terminal task.
  A stream that logged nothing before keeps its one event in its state hash (see below), not in a log.
  The separate steps (append, carrier release, connection release) were three scripts per stream.

  Input:
    KEYS[1] event log (stream)
    KEYS[2] the stream's connection lease (string: connection id)
    KEYS[3] the stream's state (hash)
    KEYS[4] the task's carrier lease (string: stream id)

    ARGV[1] connection id
    ARGV[2] event data (a JSON-RPC message)
    ARGV[3] approximate maximum number of events kept
    ARGV[4] retention (ms): events older than this are trimmed; the log expires this long after its last event
    ARGV[5] JSON object of state fields to set along
    ARGV[6] 'event' to append the event, 'state' to set only the state fields (no event)
    ARGV[7] stream id

  Output:
    { 0, entryId }      done ('' as entryId for 'state')
    { -6 }              the connection does not hold the stream (nothing changed)
]]
--- @include "includes/codes"
--- @include "includes/eventLog"

-- A kept event's pieces: Redis keeps a hash as a listpack while each value is at most 64 bytes and it has at
-- most 128 fields (hash-max-listpack-value, hash-max-listpack-entries).
local KEPT_PIECE_BYTES = 64
local KEPT_PIECES = 96

if redis.call('GET', KEYS[2]) ~= ARGV[1] then return { FENCED } end
local fields = {}
for field, value in pairs(cjson.decode(ARGV[5])) do
  fields[#fields + 1] = field
  fields[#fields + 1] = tostring(value)
end
local id = ''
if ARGV[6] == 'event' and tonumber(redis.call('HGET', KEYS[3], 'n') or '0') > 0 then
  id = appendEvent(KEYS[1], KEYS[3], ARGV[2], ARGV[3], ARGV[4], '', fields)
elseif ARGV[6] == 'event' then
  -- The stream's first and last event (a task that sent nothing before its result): kept in the state, as
  -- `fid` (its entry id, ordinal 1) and its data, not in a log of its own, since a new Redis stream takes
  -- over 4 KB (its first listpack is allocated whole) for as long as it is kept. EventLog reads it from there.
  -- The data goes in pieces of at most 64 bytes (`fd1`..`fdN`, `fc` = N), so the hash stays a listpack (about
  -- 500 bytes for a short response, where one `fd` field over 64 bytes makes it a hashtable of over 1 KB);
  -- data too long for that (past KEPT_PIECES pieces) goes whole in `fd`.
  id = tostring(nowMs()) .. '-1'
  local args = { 'n', '1', 'ms', id:sub(1, -3), 'fid', id }
  local data = ARGV[2]
  if #data <= KEPT_PIECE_BYTES * KEPT_PIECES then
    local pieces = 0
    for at = 1, #data, KEPT_PIECE_BYTES do
      pieces = pieces + 1
      args[#args + 1] = 'fd' .. pieces
      args[#args + 1] = string.sub(data, at, at + KEPT_PIECE_BYTES - 1)
    end
    args[#args + 1] = 'fc'
    args[#args + 1] = tostring(pieces)
  else
    args[#args + 1] = 'fd'
    args[#args + 1] = data
  end
  for _, value in ipairs(fields) do args[#args + 1] = value end
  redis.call('HSET', KEYS[3], unpack(args))
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
elseif #fields > 0 then
  redis.call('HSET', KEYS[3], unpack(fields))
end
redis.call('DEL', KEYS[2])
if redis.call('GET', KEYS[4]) == ARGV[7] then redis.call('DEL', KEYS[4]) end
return { OK, id }
