-- Result codes shared by every transition script (mirrored by ScriptCode in src/script-codes.ts).
local OK = 0
local NOT_FOUND = -1
local TERMINAL = -2
local ILLEGAL_TRANSITION = -3
local LIMIT_EXCEEDED = -4
local ALREADY_EXISTS = -5
local FENCED = -6
local NOT_CARRIER = -7
local STALE = -8

local function isTerminal(status)
  return status == 'completed' or status == 'failed' or status == 'cancelled'
end
