-- Dead entries become pending with their attempts reset and their error cleared, without reading their
-- bodies: the first ARGV[2] dead ones, or (ARGV[2] = 0) those of the ids ARGV[3]... that are dead.
-- KEYS: dead, pending. ARGV: job key prefix, how many, ids. Reply: how many were revived.
local ids = ARGV[2] == '0' and { unpack(ARGV, 3) } or redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local revived = 0
for _, id in ipairs(ids) do
  if redis.call('ZREM', KEYS[1], id) == 1 then
    redis.call('HSET', ARGV[1] .. id, 'attempts', 0)
    redis.call('HDEL', ARGV[1] .. id, 'error', 'token')
    redis.call('RPUSH', KEYS[2], id)
    revived = revived + 1
  end
end
return revived
