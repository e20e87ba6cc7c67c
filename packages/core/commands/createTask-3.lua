--[[
  Creates a task in status 'working' and indexes it under its owner, unless the owner already has the
  maximum number of non-terminal tasks. Nothing is published: nobody can wait for a task before it exists,
  and the creator learns of it from the answer (a status notification is for a change of status).

  Input:
    KEYS[1] task hash
    KEYS[2] owner's tasks (zset, score = expiry ms)
    KEYS[3] owner's non-terminal tasks (zset, score = expiry ms)

    ARGV[1] task id
    ARGV[2] granted ttl (ms)
    ARGV[3] poll interval (ms, '' for none)
    ARGV[4] owner id (digest)
    ARGV[5] max non-terminal tasks per owner (0 = unlimited)
    ARGV[6] JSON object of extra string fields (kind when not 'task', session = the digest of its id: its feed
            and channel are derived from it, see includes/target; tool, progressToken, wire)
    ARGV[7] '1' to list the task under its owner, '0' to keep it out of tasks/list (direct calls)
    ARGV[8] the creating pod's name for the task's trail ('' or absent for none; see includes/trail)
    ARGV[9] now (unix ms, the Redis clock as the creating process follows it, see RedisClock; '' or absent:
            the server's TIME): createdAt

  Output:
    { 0, snapshot }           created
    { -5 }                    a task with this id exists
    { -4, active }            the owner is at the limit
]]
--- @include "includes/codes"
--- @include "includes/now"
--- @include "includes/snapshot"
--- @include "includes/trail"

local extra = cjson.decode(ARGV[6])
-- Claims the id with the record's first field: a replay of this creation (its reply lost) finds the record,
-- a new task gets its hash, in one command instead of an EXISTS before the HSET below.
if redis.call('HSETNX', KEYS[1], 'status', 'working') == 0 then return { ALREADY_EXISTS } end

local now = tonumber(ARGV[9]) or nowMs()
local limit = tonumber(ARGV[5])
-- The owner's non-terminal tasks, when counted (-1 when not): 0 means the index does not exist yet.
local active = -1
-- Entries of tasks that expired while non-terminal are pruned when they could make the count reach the limit.
if limit > 0 then
  active = redis.call('ZCARD', KEYS[3])
  if active >= limit then
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
    active = redis.call('ZCARD', KEYS[3])
    if active >= limit then
      redis.call('DEL', KEYS[1])
      return { LIMIT_EXCEEDED, active }
    end
  end
else
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
end

local ttl = tonumber(ARGV[2])
local expiresAt = now + ttl
-- The record keeps no field it can derive (expiresAt = createdAt + ttl, the session's keys, kind 'task'): a
-- smaller hash, and one that stays a listpack longer.
local task = {
  status = 'working', createdAt = tostring(now), lastUpdatedAt = tostring(now), ttl = ARGV[2], owner = ARGV[4],
  version = '1'
}
if ARGV[3] ~= '' then task.pollInterval = ARGV[3] end
for field, value in pairs(extra) do task[field] = tostring(value) end
task.cpod = trailPod(task, ARGV[8])
local fields = {}
for field, value in pairs(task) do
  fields[#fields + 1] = field
  fields[#fields + 1] = value
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('PEXPIREAT', KEYS[1], expiresAt)

-- An index lives at least as long as its longest-lived member (the non-terminal index empties, and so vanishes,
-- whenever the owner has nothing running). Its expiry moves forward in steps past the task's (a minute, or the
-- ttl when shorter), so a busy owner's next tasks find it long enough: one PEXPIRETIME, where moving it at every
-- task (PEXPIREAT GT) also needed a PEXPIRETIME whenever it did not move (a task of the same millisecond).
local step = math.min(60000, ttl)
local function index(key, created)
  local current = created and -2 or redis.call('PEXPIRETIME', key)
  redis.call('ZADD', key, expiresAt, ARGV[1])
  if current < expiresAt then redis.call('PEXPIREAT', key, expiresAt + step) end
end
if ARGV[7] == '1' then index(KEYS[2], false) end
index(KEYS[3], active == 0)

return { OK, encodeSnapshot(ARGV[1], task) }
