import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PendingOAuthState, SessionStore, StoredSession } from '../../src/sessions/store.js';
import { sampleSession } from './sample-session.js';

/**
 * What every session store must do with pending OAuth states, run against each implementation:
 * `open` gives a fresh, empty store; `dispose` removes what it left behind.
 */
export function oauthStateContract(name: string, open: () => Promise<SessionStore>, dispose: () => Promise<void> = async () => {}) {
  describe(`${name}: pending OAuth states`, () => {
    let store: SessionStore;
    const now = Date.now();

    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
      await dispose();
    });

    async function session(): Promise<StoredSession> {
      const s = sampleSession();
      await store.create(s);
      return s;
    }

    function pending(s: StoredSession, expiresAt = now + 300_000): PendingOAuthState {
      return {
        stateKey: randomUUID(),
        sessionKey: s.key,
        userId: s.userId,
        integration: 'gmail',
        codeVerifier: 'verifier-' + randomUUID(),
        bindingKey: randomUUID(),
        expiresAt,
      };
    }

    it('gives a state back once, whole, and never again', async () => {
      const state = pending(await session());
      await store.saveOAuthState(state);
      expect(await store.takeOAuthState({ stateKey: state.stateKey })).toEqual(state);
      expect(await store.takeOAuthState({ stateKey: state.stateKey })).toBeUndefined();
    });

    it('lets only one of two racing callbacks take a state', async () => {
      const state = pending(await session());
      await store.saveOAuthState(state);
      const taken = await Promise.all([1, 2, 3].map(() => store.takeOAuthState({ stateKey: state.stateKey })));
      expect(taken.filter(Boolean)).toHaveLength(1);
    });

    it('knows nothing of a state it was never given', async () => {
      expect(await store.takeOAuthState({ stateKey: randomUUID() })).toBeUndefined();
    });

    it('discards the states of a session that ends, alone or with all of its user', async () => {
      const a = await session();
      const b = await session();
      const [sa, sb] = [pending(a), pending(b)];
      await store.saveOAuthState(sa);
      await store.saveOAuthState(sb);
      await store.deleteByKey({ key: a.key });
      await store.deleteByUser({ userId: b.userId });
      expect(await store.takeOAuthState({ stateKey: sa.stateKey })).toBeUndefined();
      expect(await store.takeOAuthState({ stateKey: sb.stateKey })).toBeUndefined();
    });
  });
}
