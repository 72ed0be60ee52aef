-- A failed attempt of a claim still held by this token: back as a retry due at ARGV[4], or dead.
-- KEYS: job, running, retries, dead. ARGV: job id, token, the error, retry time (or now, for dead), 'dead' or ''.
-- Reply: 1 done, 0 the lease was another holder's.
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[2] or not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[1], 'error', ARGV[3])
redis.call('ZADD', ARGV[5] == 'dead' and KEYS[4] or KEYS[3], tonumber(ARGV[4]), ARGV[1])
return 1
