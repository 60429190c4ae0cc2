/**
 * The Redis session store on its own: the OAuth state contract every store meets, the key TTLs
 * that follow expiry, and atomicity of the guard's touch against a logout of all sessions.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisSessionStore } from '../../src/sessions/stores/redis.js';
import { deleteKeys, REDIS_URL } from '../helpers/backends.js';
import { oauthStateContract } from '../helpers/oauth-state-contract.js';
import { sampleSession } from '../helpers/sample-session.js';

const IDLE_MS = 60_000;
const GRACE_MS = 10_000;

function uniquePrefix(): string {
  return `trove-t-${randomUUID().slice(0, 12)}:`;
}

let contractPrefix = '';
oauthStateContract(
  'Redis session store',
  async () => {
    contractPrefix = uniquePrefix();
    return RedisSessionStore.open({ url: REDIS_URL, prefix: contractPrefix, idleTimeoutMs: IDLE_MS, expiredGraceMs: GRACE_MS });
  },
  async () => deleteKeys(REDIS_URL, contractPrefix),
);

describe('Redis session store', () => {
  const prefix = uniquePrefix();
  let store: RedisSessionStore;
  let redis: Redis;

  beforeAll(async () => {
    store = await RedisSessionStore.open({ url: REDIS_URL, prefix, idleTimeoutMs: IDLE_MS, expiredGraceMs: GRACE_MS });
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await store?.close();
    await deleteKeys(REDIS_URL, prefix);
    redis?.disconnect();
  });

  const session = sampleSession;

  it('gives a session back whole by store key, by public id and in its user list', async () => {
    const s = session({ metadata: { loginMethod: 'password', deviceName: 'laptop' } });
    await store.create(s);
    expect(await store.findByKey({ key: s.key })).toEqual(s);
    expect(await store.findById({ id: s.id })).toEqual(s);
    expect(await store.listByUser({ userId: s.userId })).toEqual([s]);
  });

  it('keeps a session key no longer than its idle timeout (plus grace) without a touch, and moves it on a touch', async () => {
    const s = session();
    await store.create(s);
    const expireAt = Number(await redis.pexpiretime(`${prefix}s:${s.key}`));
    expect(expireAt).toBe(s.lastAccessedAt + IDLE_MS + GRACE_MS);
    const now = Date.now() + 5_000;
    const touched = await store.touchIfLive({ key: s.key, now, idleSince: now - IDLE_MS, renewIfExpiresBefore: 0, renewTo: 0 });
    expect(touched?.lastAccessedAt).toBe(now);
    expect(Number(await redis.pexpiretime(`${prefix}s:${s.key}`))).toBe(now + IDLE_MS + GRACE_MS);
    expect(Number(await redis.pexpiretime(`${prefix}id:${s.id}`))).toBe(now + IDLE_MS + GRACE_MS);
  });

  it('lets the key expire with the absolute expiry when that comes first, and renews when due', async () => {
    const now = Date.now();
    const s = session({ expiresAt: now + 20_000 });
    await store.create(s);
    expect(Number(await redis.pexpiretime(`${prefix}s:${s.key}`))).toBe(s.expiresAt + GRACE_MS);
    const renewTo = now + 3_600_000;
    const touched = await store.touchIfLive({ key: s.key, now, idleSince: now - IDLE_MS, renewIfExpiresBefore: now + 30_000, renewTo });
    expect(touched?.expiresAt).toBe(renewTo);
    expect(Number(await redis.pexpiretime(`${prefix}s:${s.key}`))).toBe(now + IDLE_MS + GRACE_MS);
  });

  it('never touches a session past its expiry or idle too long, and leaves it as it was', async () => {
    const now = Date.now();
    const expired = session({ expiresAt: now - 1 });
    const idle = session({ lastAccessedAt: now - IDLE_MS - 1 });
    await store.create(expired);
    await store.create(idle);
    for (const s of [expired, idle]) {
      expect(await store.touchIfLive({ key: s.key, now, idleSince: now - IDLE_MS, renewIfExpiresBefore: 0, renewTo: 0 })).toBeUndefined();
      expect(await store.findByKey({ key: s.key })).toEqual(s);
    }
    expect(await store.purgeExpired({ now, idleSince: now - IDLE_MS })).toBeGreaterThanOrEqual(2);
    expect(await store.findByKey({ key: expired.key })).toBeUndefined();
    expect(await store.findById({ id: idle.id })).toBeUndefined();
  });

  it('a touch racing a logout of every session never brings one back', async () => {
    const userId = randomUUID();
    const sessions = Array.from({ length: 20 }, () => session({ userId }));
    for (const s of sessions) await store.create(s);
    const now = Date.now();
    const touches = sessions.map((s) => store.touchIfLive({ key: s.key, now, idleSince: now - IDLE_MS, renewIfExpiresBefore: 0, renewTo: 0 }));
    const ended = store.deleteByUser({ userId });
    const late = sessions.map((s) => store.touchIfLive({ key: s.key, now, idleSince: now - IDLE_MS, renewIfExpiresBefore: 0, renewTo: 0 }));
    await Promise.all([...touches, ended, ...late]);
    expect(await ended).toBe(20);
    for (const s of sessions) expect(await store.findByKey({ key: s.key })).toBeUndefined();
    expect(await store.listByUser({ userId })).toEqual([]);
    expect(await redis.exists(`${prefix}u:${userId}`)).toBe(0);
  });

  it('logout-all keeps the one session named, and only that one', async () => {
    const userId = randomUUID();
    const [keep, a, b] = [session({ userId }), session({ userId }), session({ userId })];
    for (const s of [keep, a, b]) await store.create(s);
    expect(await store.deleteByUser({ userId, exceptKey: keep.key })).toBe(2);
    expect((await store.listByUser({ userId })).map((s) => s.key)).toEqual([keep.key]);
  });
});
