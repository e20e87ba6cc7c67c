-- Reply codes shared by every script, one meaning each (mirrored by ScriptCode in src/redis/script-codes.ts).
local OK = 0
local NOT_FOUND = -1
local TERMINAL = -2
local ILLEGAL_TRANSITION = -3
local LIMIT_EXCEEDED = -4
-- a task with this id exists (createTask)
local ALREADY_EXISTS = -5
local FENCED = -6
local NOT_CARRIER = -7
local STALE = -8
-- a lease is another holder's, or nobody's where the caller's was required
local NOT_HELD = -9
-- the input request was answered already (the first answer wins)
local ANSWERED = -10
-- the session keys the caller passed are not the ones the task's record names
local WRONG_SESSION_KEYS = -11

local function isTerminal(status)
  return status == 'completed' or status == 'failed' or status == 'cancelled'
end
