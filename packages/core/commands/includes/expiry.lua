-- Keeps `key` alive at least until `at` (unix ms). One command in the usual case, where the expiry only has
-- to move later; a key without an expiry yet (GT counts it as never expiring) gets one.
local function keepUntil(key, at)
  if redis.call('PEXPIREAT', key, at, 'GT') == 1 then return end
  if redis.call('PEXPIRETIME', key) == -1 then redis.call('PEXPIREAT', key, at) end
end
