-- Finishes a claim still held by this token: the job and its body go (they would fill a noeviction Redis),
-- its marker stays for the window, and the done count and the list of recent completions take it.
-- KEYS: job, running, done count, recent done. ARGV: job id, token, the done record (JSON), recent kept.
-- Reply: 1 done, 0 the lease was another holder's.
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[2] or not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[1])
redis.call('INCR', KEYS[3])
redis.call('LPUSH', KEYS[4], ARGV[3])
redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[4]) - 1)
return 1
