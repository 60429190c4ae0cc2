import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type MainDatabase } from '../../src/db/database.js';
import { UsersRepository } from '../../src/users/repository.js';

let dir: string;
let mine: MainDatabase;
let theirs: MainDatabase;

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'trove-users-'));
  const url = `sqlite:${path.join(dir, 'trove.db')}`;
  mine = await openDatabase(url);
  await migrateToLatest(mine);
  // Another connection to the same file stands for another process (the CLI, say).
  theirs = await openDatabase(url);
});
afterEach(async () => {
  await mine.close();
  await theirs.close();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("the guard's user lookup sees this process's changes at once", async () => {
  const users = new UsersRepository(mine);
  await users.create({ email: 'first@example.com', name: 'First', passwordHash: 'x' });
  const second = await users.create({ email: 'second@example.com', name: 'Second', passwordHash: 'x' });
  expect((await users.findRecentById({ id: second.id }))?.role).toBe('user');

  await users.setRole({ id: second.id, role: 'admin' });
  expect((await users.findRecentById({ id: second.id }))?.role).toBe('admin');
  await users.softDelete({ id: second.id });
  expect(await users.findRecentById({ id: second.id })).toBeUndefined();
});

it("sees another process's changes within a quarter second", async () => {
  const users = new UsersRepository(mine);
  await users.create({ email: 'first@example.com', name: 'First', passwordHash: 'x' });
  const second = await users.create({ email: 'second@example.com', name: 'Second', passwordHash: 'x' });
  expect((await users.findRecentById({ id: second.id }))?.role).toBe('user');

  await new UsersRepository(theirs).setRole({ id: second.id, role: 'admin' });
  await sleep(300);
  expect((await users.findRecentById({ id: second.id }))?.role).toBe('admin');

  await new UsersRepository(theirs).softDelete({ id: second.id });
  await sleep(300);
  expect(await users.findRecentById({ id: second.id })).toBeUndefined();
});
