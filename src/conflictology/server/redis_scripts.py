"""The Lua scripts of the Redis backend: each one a compare-and-set Redis runs atomically.

Their text is part of a running deployment's contract (Redis caches them by their SHA): a change
here is a change of the stored format, not a refactor.
"""

# KEYS: room hash, room set, owner key, log. ARGV: code, snapshot, process, channel, initial state,
# then the log's records.
INSERT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[4])
for i = 6, #ARGV, 1000 do redis.call('RPUSH', KEYS[4], unpack(ARGV, i, math.min(i + 999, #ARGV))) end
redis.call('HSET', KEYS[1], 'v', '1', 'data', ARGV[2], 'initial', ARGV[5])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SET', KEYS[3], ARGV[3])
redis.call('PUBLISH', ARGV[4], '1')
return 1
"""

# KEYS: room hash, the room's followers, log. ARGV: expected version, new version, snapshot, channel,
# process, '1' when a new log starts (a new game, or none) with this initial state, the initial
# state, then the records to append to the log (in chunks: Lua's unpack has a limit).
# Returns 0 when saved, -1 when the room is gone, else the version actually stored (a conflict).
# The change is announced only when some process other than the one that made it follows the room:
# the writer pushes its own change itself, and hearing it back would cost it a read per move.
UPDATE = """
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return -1 end
if tonumber(v) ~= tonumber(ARGV[1]) then return tonumber(v) end
if ARGV[6] == '1' then
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[1], 'initial', ARGV[7])
end
for i = 8, #ARGV, 1000 do redis.call('RPUSH', KEYS[3], unpack(ARGV, i, math.min(i + 999, #ARGV))) end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'data', ARGV[3])
local n = redis.call('SCARD', KEYS[2])
if n > 1 or (n == 1 and redis.call('SISMEMBER', KEYS[2], ARGV[5]) == 0) then
  redis.call('PUBLISH', ARGV[4], ARGV[2])
end
return 0
"""

# KEYS: owner key, room hash. ARGV: this process, the owner it replaces ('' for none).
CLAIM = """
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local cur = redis.call('GET', KEYS[1])
if (not cur and ARGV[2] == '') or cur == ARGV[2] then
  redis.call('SET', KEYS[1], ARGV[1])
  return 1
end
return 0
"""

# A token bucket per client address (and per IPv6 /48), shared by every process. KEYS: the address's
# bucket, the wider one ('' for none). ARGV: rate per second, burst, the wider bucket's rate and
# burst, 1 to take or -1 to give one back. Returns {1, 0} when taken, {0, seconds until one is back}.
BUDGET = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local function level(key, rate, burst)
  local b = redis.call('HMGET', key, 'l', 's')
  local l = tonumber(b[1]) or burst
  local s = tonumber(b[2]) or now
  return math.min(burst, l + (now - s) * rate)
end
local function store(key, l, rate, burst)
  redis.call('HSET', key, 'l', tostring(l), 's', tostring(now))
  redis.call('PEXPIRE', key, math.ceil((burst - l) / rate * 1000) + 1000)
end
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local wrate, wburst = tonumber(ARGV[3]), tonumber(ARGV[4])
local a = level(KEYS[1], rate, burst)
local w = nil
if KEYS[2] ~= '' then w = level(KEYS[2], wrate, wburst) end
if ARGV[5] == '-1' then
  store(KEYS[1], math.min(burst, a + 1), rate, burst)
  if w then store(KEYS[2], math.min(wburst, w + 1), wrate, wburst) end
  return {1, 0}
end
if a < 1 or (w and w < 1) then
  local wait = 0
  if a < 1 then wait = (1 - a) / rate end
  if w and w < 1 then wait = math.max(wait, (1 - w) / wrate) end
  return {0, math.ceil(wait)}
end
store(KEYS[1], a - 1, rate, burst)
if w then store(KEYS[2], w - 1, wrate, wburst) end
return {1, 0}
"""
