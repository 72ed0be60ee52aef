-- Frees catch-up's lock, only if this holder holds it. KEYS[1]: the lock; ARGV[1]: holder.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 0
