/**
 * The first account on an empty instance becomes admin (decisions §5), also when the first
 * registrations arrive at the same moment on several processes sharing one PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openServices, type Services } from '../../src/services.js';
import { createServicesBackend, type ServicesBackend } from '../helpers/backends.js';

let backend: ServicesBackend;
let processes: Services[] = [];

beforeAll(async () => {
  backend = await createServicesBackend();
  const config = loadConfig({ ...backend.env, DATA_DIR: '.' });
  // Three at once on an empty database: the migrations run concurrently too.
  processes = await Promise.all([1, 2, 3].map(() => openServices(config)));
});
afterAll(async () => {
  await Promise.all(processes.map((s) => s.close()));
  await backend?.dispose();
});

it('concurrent first registrations on separate connection pools make exactly one admin', async () => {
  const created = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      processes[i % processes.length]!.users.create({ email: `racer${i}@example.com`, name: `Racer ${i}`, passwordHash: '$argon2id$x' }),
    ),
  );
  expect(created.filter((u) => u.role === 'admin')).toHaveLength(1);
  expect(await processes[0]!.users.countAdmins()).toBe(1);
});
