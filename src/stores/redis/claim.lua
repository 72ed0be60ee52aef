-- Hands out one due entry under a lease, counted as an attempt.
-- KEYS: pending list, retries (zset by due time), running (zset by lease end).
-- ARGV: now, lease (ms), token, job key prefix.
-- Reply: false when none is due, else { job id, attempt, data }.
local now = tonumber(ARGV[1])
-- Retries now due, and leases that ran out (their holder died or stalled), wait again: a bounded move per
-- claim, so one claim never walks a long backlog; each claim moves more than it takes.
for _, set in ipairs({ KEYS[2], KEYS[3] }) do
  local due = redis.call('ZRANGEBYSCORE', set, '-inf', now, 'LIMIT', 0, 100)
  if #due > 0 then
    redis.call('ZREM', set, unpack(due))
    redis.call('RPUSH', KEYS[1], unpack(due))
  end
end
while true do
  local id = redis.call('LPOP', KEYS[1])
  if not id then return false end
  local job = ARGV[4] .. id
  -- An id whose job is gone (purged while it waited) is skipped.
  if redis.call('EXISTS', job) == 1 then
    local attempt = redis.call('HINCRBY', job, 'attempts', 1)
    redis.call('HSET', job, 'token', ARGV[3])
    redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), id)
    return { id, attempt, redis.call('HGET', job, 'data') }
  end
end
