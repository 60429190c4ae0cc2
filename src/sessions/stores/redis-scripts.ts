/**
 * The Lua scripts of the Redis session store. Each runs atomically in Redis, so every store
 * operation is one round trip and no other client ever sees a session without its index
 * entries or the reverse. Keys (P is SESSION_STORE_PREFIX, ARGV[1] of every script):
 *
 *   P s:<store key>     hash: the session's fields; TTL = its expiry (absolute or idle, whichever
 *                       comes first) plus a grace period, so a late request hears "Session expired"
 *   P id:<public id>    string: the store key, same TTL as the session
 *   P u:<user id>       set: store keys of the user's sessions (stale members are pruned on read)
 *   P os:<store key>    set: state keys of the session's pending OAuth states
 *   P o:<state key>     string: a pending OAuth state (JSON), expiring at its expiresAt
 *
 * Times are epoch milliseconds. Lua numbers are doubles, exact for these values; they are
 * turned back into text with %d so Redis never receives an exponent.
 */

/** Ends one session with everything that hangs off it; 1 when it existed. */
const DROP = `
local function drop(p, key)
  local h = p .. 's:' .. key
  local v = redis.call('HMGET', h, 'id', 'userId')
  local states = redis.call('SMEMBERS', p .. 'os:' .. key)
  for _, st in ipairs(states) do redis.call('DEL', p .. 'o:' .. st) end
  redis.call('DEL', p .. 'os:' .. key)
  if not v[1] then return 0 end
  redis.call('DEL', h, p .. 'id:' .. v[1])
  redis.call('SREM', p .. 'u:' .. v[2], key)
  return 1
end
`;

/** KEYS[1] s:<key>. ARGV: prefix, key, id, userId, createdAt, lastAccessedAt, expiresAt, ip, ua, metadata, csrf, expireAt. */
export const CREATE = `
local p = ARGV[1]
redis.call('HSET', KEYS[1], 'id', ARGV[3], 'userId', ARGV[4], 'createdAt', ARGV[5], 'lastAccessedAt', ARGV[6],
  'expiresAt', ARGV[7], 'ipAddress', ARGV[8], 'userAgent', ARGV[9], 'metadata', ARGV[10], 'csrfToken', ARGV[11])
redis.call('PEXPIREAT', KEYS[1], ARGV[12])
redis.call('SET', p .. 'id:' .. ARGV[3], ARGV[2], 'PXAT', ARGV[12])
redis.call('SADD', p .. 'u:' .. ARGV[4], ARGV[2])
return 1
`;

/**
 * The guard's one round trip, the same rule as the SQLite store's conditional UPDATE: a session
 * that is missing, past expiresAt or idle too long is left alone (nil); a live one records the
 * access, is renewed when due, gets its TTL moved, and comes back whole.
 * KEYS[1] s:<key>. ARGV: prefix, now, idleSince, renewIfExpiresBefore, renewTo, idleMs, graceMs.
 */
export const TOUCH_IF_LIVE = `
local p = ARGV[1]
local h = KEYS[1]
local v = redis.call('HMGET', h, 'expiresAt', 'lastAccessedAt', 'id')
if not v[1] then return false end
local now = tonumber(ARGV[2])
local expiresAt = tonumber(v[1])
if expiresAt < now or tonumber(v[2]) < tonumber(ARGV[3]) then return false end
if expiresAt < tonumber(ARGV[4]) then
  expiresAt = tonumber(ARGV[5])
  redis.call('HSET', h, 'expiresAt', ARGV[5])
end
redis.call('HSET', h, 'lastAccessedAt', ARGV[2])
local deadline = math.min(expiresAt, now + tonumber(ARGV[6])) + tonumber(ARGV[7])
local at = string.format('%d', deadline)
redis.call('PEXPIREAT', h, at)
redis.call('PEXPIREAT', p .. 'id:' .. v[3], at)
return redis.call('HGETALL', h)
`;

/** KEYS[1] id:<id>. ARGV: prefix. Returns [key, ...hash fields] or nil. */
export const FIND_BY_ID = `
local key = redis.call('GET', KEYS[1])
if not key then return false end
local fields = redis.call('HGETALL', ARGV[1] .. 's:' .. key)
if #fields == 0 then return false end
table.insert(fields, 1, key)
return fields
`;

/** KEYS[1] u:<userId>. ARGV: prefix. Returns a list of [key, ...hash fields]; prunes members whose session is gone. */
export const LIST_BY_USER = `
local p = ARGV[1]
local out = {}
for _, key in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local fields = redis.call('HGETALL', p .. 's:' .. key)
  if #fields == 0 then
    redis.call('SREM', KEYS[1], key)
  else
    table.insert(fields, 1, key)
    table.insert(out, fields)
  end
end
return out
`;

/** KEYS[1] s:<key>. ARGV: prefix, key. */
export const DELETE_BY_KEY = `${DROP}
return drop(ARGV[1], ARGV[2])
`;

/**
 * Every session of a user in one atomic step (logout-all, force-logout, password change): a
 * request of that user running meanwhile either finished its touch before, or finds nothing.
 * KEYS[1] u:<userId>. ARGV: prefix, exceptKey ('' for none).
 */
export const DELETE_BY_USER = `${DROP}
local n = 0
for _, key in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if key ~= ARGV[2] then
    n = n + drop(ARGV[1], key)
    redis.call('SREM', KEYS[1], key)
  end
end
return n
`;

/** KEYS[1] u:<userId>. ARGV: prefix, now, idleSince. Ends that user's expired sessions early; prunes the index. */
export const PURGE_USER = `${DROP}
local n = 0
for _, key in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local v = redis.call('HMGET', ARGV[1] .. 's:' .. key, 'expiresAt', 'lastAccessedAt')
  if not v[1] then
    redis.call('SREM', KEYS[1], key)
    redis.call('DEL', ARGV[1] .. 'os:' .. key)
  elseif tonumber(v[1]) < tonumber(ARGV[2]) or tonumber(v[2]) < tonumber(ARGV[3]) then
    n = n + drop(ARGV[1], key)
  end
end
return n
`;

/**
 * Keeps a state only while its session exists, and lists it under the session so ending the
 * session discards it. KEYS[1] o:<stateKey>. ARGV: prefix, json, expiresAt, sessionKey, stateKey, now.
 */
export const SAVE_OAUTH_STATE = `
local p = ARGV[1]
if redis.call('EXISTS', p .. 's:' .. ARGV[4]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
local set = p .. 'os:' .. ARGV[4]
redis.call('SADD', set, ARGV[5])
local ttl = redis.call('PTTL', set)
if ttl < 0 or tonumber(ARGV[6]) + ttl < tonumber(ARGV[3]) then redis.call('PEXPIREAT', set, ARGV[3]) end
return 1
`;

/** Single use: read and delete in one step. KEYS[1] o:<stateKey>. ARGV: prefix, stateKey. */
export const TAKE_OAUTH_STATE = `
local v = redis.call('GET', KEYS[1])
if not v then return false end
redis.call('DEL', KEYS[1])
local state = cjson.decode(v)
redis.call('SREM', ARGV[1] .. 'os:' .. state.sessionKey, ARGV[2])
return v
`;
