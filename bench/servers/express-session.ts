import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { hash } from '@node-rs/argon2';
import Database from 'better-sqlite3';
import { ConnectSessionKnexStore } from 'connect-session-knex';
import express, { type NextFunction, type Request, type Response } from 'express';
import session from 'express-session';
import knex from 'knex';
import { portFromEnv, readOne, type ProfileUser } from './envelope.js';

/**
 * Scenario (c): the profile route the way most Node apps build it. Express, express-session with
 * an SQLite store from npm, the user read from an SQLite table. Both files get WAL with
 * synchronous=NORMAL, as Trove's access-time writes do, so the comparison is about the code on
 * the request path and not about fsync.
 */
declare module 'express-session' {
  interface SessionData {
    userId: string;
  }
}

const dataDir = process.env.BENCH_DATA_DIR;
if (!dataDir) throw new Error('BENCH_DATA_DIR must be set');

const db = new Database(path.join(dataDir, 'app.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`CREATE TABLE IF NOT EXISTS users (
  id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL, role TEXT NOT NULL,
  password_hash TEXT NOT NULL, created_at TEXT NOT NULL, deleted_at TEXT)`);
const insertUser = db.prepare(
  'INSERT INTO users (id, email, name, role, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)',
);
const findUser = db.prepare<[string], ProfileUser>(
  'SELECT id, email, name, role, created_at AS createdAt FROM users WHERE id = ? AND deleted_at IS NULL',
);

const sessionsDb = knex({
  client: 'better-sqlite3',
  connection: { filename: path.join(dataDir, 'sessions.db') },
  useNullAsDefault: true,
  pool: {
    afterCreate(conn: Database.Database, done: (err: Error | null, conn: Database.Database) => void) {
      conn.pragma('journal_mode = WAL');
      conn.pragma('synchronous = NORMAL');
      done(null, conn);
    },
  },
});
const store = new ConnectSessionKnexStore({ knex: sessionsDb, tableName: 'sessions' });
await store.ready;

const app = express();
app.disable('x-powered-by');
// Trove's envelope reports time spent on the request, so this one measures from the first middleware.
app.use((_req: Request, res: Response, next: NextFunction) => {
  res.locals.startedAt = performance.now();
  next();
});
app.use(
  session({
    store,
    secret: randomBytes(32).toString('base64url'),
    resave: false,
    saveUninitialized: false,
    cookie: { httpOnly: true, sameSite: 'strict', secure: false, maxAge: 604_800_000 },
  }),
);

function unauthorized(res: Response): void {
  res.status(401).json({ statusCode: 401, error: 'Unauthorized', message: 'Invalid session' });
}

function requireUser(req: Request, res: Response, next: NextFunction): void {
  const userId = req.session.userId;
  const user = userId === undefined ? undefined : findUser.get(userId);
  if (!user) return unauthorized(res);
  res.locals.user = user;
  next();
}

app.post('/v1/auth/register', express.json(), async (req: Request, res: Response) => {
  const { email, name, password } = req.body as { email: string; name: string; password: string };
  const user: ProfileUser = { id: randomUUID(), email, name, role: 'user', createdAt: new Date().toISOString() };
  insertUser.run(user.id, user.email, user.name, user.role, await hash(password), user.createdAt);
  // A new id at sign-in, as express-session's docs advise against session fixation.
  req.session.regenerate((err) => {
    if (err) return void res.status(500).end();
    req.session.userId = user.id;
    res.status(201).json({ user: { id: user.id, email: user.email, name: user.name } });
  });
});

app.get('/v1/user/profile', requireUser, (_req: Request, res: Response) => {
  const elapsed = performance.now() - (res.locals.startedAt as number);
  res.json(readOne('user.readOne', elapsed, res.locals.user as ProfileUser));
});

const server = app.listen(portFromEnv(), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => void sessionsDb.destroy().then(() => process.exit(0)));
  server.closeAllConnections();
});
