-- Extends a lease still held by this token. KEYS: job, running. ARGV: job id, token, new lease end.
-- Reply: 1 renewed, 0 the lease is another holder's, or ran out and was handed out again.
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[2] or not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[2], 'XX', ARGV[3], ARGV[1])
return 1
