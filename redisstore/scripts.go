package redisstore

// never is the expiry score (milliseconds) of a task that does not
// expire: one running without a lease. It is finite, of 15 digits, so
// that servers write it back without an exponent, which some Lua
// interpreters do not read.
const never = 999_999_999_999_999

// luaOwnerLib is shared by the scripts on an owner's keys. KEYS[1] is the
// task hash, KEYS[2] the owner's order index (score 0), KEYS[3] its
// expiry index (score the expiry in ms), KEYS[4] its running index (score
// the lease expiry in ms); a task's member is "<created>:<id>" in each.
// ARGV[1] is now in ms, ARGV[2] the owner's task key prefix.
const luaOwnerLib = `
local NEVER = 999999999999999
local now = tonumber(ARGV[1])
local kp = ARGV[2]
local function reap()
  local ms = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 64)
  for _, m in ipairs(ms) do
    redis.call('DEL', kp .. string.match(m, ':(.*)$'))
    redis.call('ZREM', KEYS[2], m)
    redis.call('ZREM', KEYS[3], m)
    redis.call('ZREM', KEYS[4], m)
  end
end
local function taskTTL(score)
  if score >= NEVER then redis.call('PERSIST', KEYS[1])
  else redis.call('PEXPIRE', KEYS[1], math.max(1, score - now)) end
end
local function refresh()
  local top = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
  if #top == 0 then
    redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
    return
  end
  local max = tonumber(top[2]) or NEVER
  for i = 2, 4 do
    if max >= NEVER then redis.call('PERSIST', KEYS[i])
    else redis.call('PEXPIRE', KEYS[i], math.max(1, max - now)) end
  end
end
`

// createScript stores a new task of an owner. ARGV[3] is the ID, [4] its
// member, [5] the expiry score, [6] the lease score ("" when the
// task has ended), [7] MaxUnfinishedPerOwner, [8] the record JSON.
var createScript = newScript(luaOwnerLib + `
reap()
if redis.call('EXISTS', KEYS[1]) == 1 then return 'CONFLICT' end
if ARGV[6] ~= '' and redis.call('ZCOUNT', KEYS[4], '(' .. now, '+inf') >= tonumber(ARGV[7]) then
  return 'LIMIT'
end
redis.call('HSET', KEYS[1], 'v', 1, 'rec', ARGV[8])
redis.call('ZADD', KEYS[2], 0, ARGV[4])
local score = tonumber(ARGV[5])
redis.call('ZADD', KEYS[3], score, ARGV[4])
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[4], ARGV[6], ARGV[4]) end
taskTTL(score)
refresh()
return 'OK'
`)

// updateScript replaces a task's record if its version is ARGV[4]
// (compare and swap). ARGV[3] is the task's member, [5] the record JSON, [6] the
// expiry score, [7] the lease score ("" when the task has ended), [8]
// "1" when the write settles an expired lease (else a runner whose lease
// expired conflicts), [9] the change channel, [10] the ID.
var updateScript = newScript(luaOwnerLib + `
reap()
if redis.call('EXISTS', KEYS[1]) == 0 then return 'NF' end
if redis.call('HGET', KEYS[1], 'v') ~= ARGV[4] then return 'CONFLICT' end
if ARGV[8] ~= '1' then
  local lease = redis.call('ZSCORE', KEYS[4], ARGV[3])
  if lease and tonumber(lease) <= now then return 'CONFLICT' end
end
redis.call('HSET', KEYS[1], 'v', tonumber(ARGV[4]) + 1, 'rec', ARGV[5])
local score = tonumber(ARGV[6])
redis.call('ZADD', KEYS[3], score, ARGV[3])
if ARGV[7] == '' then redis.call('ZREM', KEYS[4], ARGV[3])
else redis.call('ZADD', KEYS[4], ARGV[7], ARGV[3]) end
taskTTL(score)
refresh()
redis.call('PUBLISH', ARGV[9], ARGV[10])
return 'OK'
`)

// deleteScript removes a task of an owner. ARGV[3] is the ID, [4] its
// member, [5] the change channel.
var deleteScript = newScript(luaOwnerLib + `
reap()
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[4])
redis.call('ZREM', KEYS[3], ARGV[4])
redis.call('ZREM', KEYS[4], ARGV[4])
refresh()
redis.call('PUBLISH', ARGV[5], ARGV[3])
return 'OK'
`)

// globalScript keeps the store-wide bounds: KEYS[1] is the expiry index
// of all tasks (member ID, score the expiry in ms), KEYS[2] a hash of
// each task's "<version> <payload bytes>", KEYS[3] the payload total.
// ARGV[1] is the operation, [2] now in ms, [3] the task ID.
//
//	reserve score size maxTasks maxBytes: admit a new task
//	check size maxBytes: would the task fit with this payload
//	set version score size: record a written version (older ones are ignored)
//	remove: forget the task
var globalScript = newScript(`
local NEVER = 999999999999999
local op, now, id = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local function meta(m)
  if not m then return 0, 0 end
  local v, s = string.match(m, '^(%d+) (%d+)$')
  return tonumber(v), tonumber(s)
end
local function forget(x)
  local _, size = meta(redis.call('HGET', KEYS[2], x))
  if size > 0 then redis.call('DECRBY', KEYS[3], size) end
  redis.call('HDEL', KEYS[2], x)
  redis.call('ZREM', KEYS[1], x)
end
for _, x in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 128)) do forget(x) end
local total = tonumber(redis.call('GET', KEYS[3]) or '0')
local res = 'OK'
if op == 'reserve' then
  local size = tonumber(ARGV[5])
  if redis.call('ZSCORE', KEYS[1], id) then return 'CONFLICT' end
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[6]) then return 'MaxTasks' end
  if total + size > tonumber(ARGV[7]) then return 'MaxPayloadBytes' end
  redis.call('ZADD', KEYS[1], ARGV[4], id)
  redis.call('HSET', KEYS[2], id, '1 ' .. size)
  redis.call('INCRBY', KEYS[3], size)
elseif op == 'check' then
  local _, cur = meta(redis.call('HGET', KEYS[2], id))
  if total - cur + tonumber(ARGV[4]) > tonumber(ARGV[5]) then return 'MaxPayloadBytes' end
  return 'OK'
elseif op == 'set' then
  local v, cur = meta(redis.call('HGET', KEYS[2], id))
  local version, size = tonumber(ARGV[4]), tonumber(ARGV[6])
  if v > version then return 'OK' end
  redis.call('ZADD', KEYS[1], ARGV[5], id)
  redis.call('HSET', KEYS[2], id, version .. ' ' .. size)
  redis.call('INCRBY', KEYS[3], size - cur)
elseif op == 'remove' then
  forget(id)
end
local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if #top == 0 then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
else
  local max = tonumber(top[2]) or NEVER
  for i = 1, 3 do
    if max >= NEVER then redis.call('PERSIST', KEYS[i])
    else redis.call('PEXPIRE', KEYS[i], math.max(1, max - now)) end
  end
end
return res
`)
