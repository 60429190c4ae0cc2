import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerUser, startTrove, type RunningTrove } from '../helpers/trove.js';

let server: RunningTrove;
beforeAll(async () => { server = await startTrove(); });
afterAll(async () => { await server.close(); });

describe('smoke', () => {
  it('registers and reads the profile', async () => {
    const c = server.client();
    const { email } = await registerUser(c);
    const res = await c.get('/v1/user/profile');
    expect(res.status).toBe(200);
    expect(res.body.result.email).toBe(email);
    const other = server.client({ localAddress: '127.0.0.2' });
    const r2 = await other.get('/v1/user/profile');
    expect(r2.status).toBe(401);
  });
});
