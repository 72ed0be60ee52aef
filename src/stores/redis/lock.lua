-- Takes or renews catch-up's leased lock (the port's "Coordination"). KEYS[1]: the lock; ARGV: holder, ttlMs.
-- Free (never taken, unlocked, or its lease ran out: the key expired) or this holder's: it is the holder's
-- for ttlMs more. 1 when held now, 0 while another holder's lease runs.
local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
