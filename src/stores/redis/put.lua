-- A batch of puts, one call (src/inbox/redis.ts, "How a put decides"). Redis runs it with no other client's
-- command in between, and its AOF keeps it whole or not at all.
-- KEYS[1]: the pending list; then a marker and a job key per put.
-- ARGV[1]: the window (ms); then per put its job id and its data (JSON).
-- Replies, per put: 1 known (a duplicate), 0 stored, or why it was not stored (a message).
local replies = {}
for put = 1, (#KEYS - 1) / 2 do
  local marker, job = KEYS[put * 2], KEYS[put * 2 + 1]
  local id, data = ARGV[put * 2], ARGV[put * 2 + 1]
  if redis.call('EXISTS', job) == 1 then
    -- Pending, running or dead, maybe longer than the window: remembered again from now.
    redis.call('SET', marker, 'stored', 'PX', ARGV[1])
    replies[put] = 1
  elseif redis.call('EXISTS', marker) == 1 then
    replies[put] = 1
  else
    -- pcall, not call: a failed write would end the script with the batch's earlier puts done but unanswered.
    local added = redis.pcall('HSET', job, 'data', data, 'attempts', 0)
    local queued = type(added) == 'table' and added or redis.pcall('RPUSH', KEYS[1], id)
    if type(queued) == 'table' and queued.err then
      -- Neither job nor marker stays for a put rejected: its retry is stored.
      redis.pcall('DEL', job)
      replies[put] = queued.err
    else
      redis.call('SET', marker, 'stored', 'PX', ARGV[1])
      replies[put] = 0
    end
  end
end
return replies
