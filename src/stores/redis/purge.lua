-- Removes up to ARGV[2] entries of one state with their markers: their keys are forgotten as duplicates.
-- KEYS[1]: the state's list (pending) or sorted set (retries, dead). ARGV: job key prefix, how many.
-- Reply: how many were removed (fewer than asked: the state is empty now).
local count = tonumber(ARGV[2])
local ids
if redis.call('TYPE', KEYS[1]).ok == 'list' then
  ids = redis.call('LRANGE', KEYS[1], 0, count - 1)
  redis.call('LTRIM', KEYS[1], count, -1)
else
  ids = redis.call('ZRANGE', KEYS[1], 0, count - 1)
  if #ids > 0 then redis.call('ZREM', KEYS[1], unpack(ids)) end
end
for _, id in ipairs(ids) do
  -- Job ids are 'k_' and the key's hash; the marker is named by the hash.
  redis.call('DEL', ARGV[1] .. id, ARGV[1] .. 'seen:' .. string.sub(id, 3))
end
return #ids
