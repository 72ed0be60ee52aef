-- Raises a high-water mark, never lowers it. KEYS[1]: the mark; ARGV[1]: the value (epoch milliseconds).
local current = tonumber(redis.call('GET', KEYS[1]))
if current == nil or current < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
end
return 0
