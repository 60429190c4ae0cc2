import type { Config } from '../config.js';
import type { Services } from '../services.js';
import type { User } from '../users/repository.js';

// The server's modules are loaded only when a command runs: importing them takes about a second,
// which help and usage errors need not wait for.

/** An expected failure (an unknown email, say): one line on stderr, exit code 1, no stack. */
export class CommandFailed extends Error {}

export interface Io {
  out(line: string): void;
  warn(line: string): void;
}

export interface Command {
  /** Positional argument names, shown in the usage line. */
  args: string[];
  summary: string;
  run(input: { config: Config; args: string[]; io: Io }): Promise<void>;
}

async function withServices(config: Config, work: (services: Services) => Promise<void>): Promise<void> {
  const { openServices } = await import('../services.js');
  const services = await openServices(config);
  try {
    await work(services);
  } finally {
    await services.close();
  }
}

async function userByEmail(services: Services, raw: string): Promise<User> {
  const { normalizeEmail } = await import('../auth/service.js');
  const email = normalizeEmail(raw);
  const user = await services.users.findByEmail({ email });
  if (!user) throw new CommandFailed(`no user with email ${email}`);
  return user;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

async function warnIfNoAdminLeft(services: Services, io: Io): Promise<void> {
  if ((await services.users.countAdmins()) === 0) {
    io.warn('warning: no admin is left; give the role back with "trove users grant-admin <email>"');
  }
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  return rows.map((row) => row.map((cell, col) => cell.padEnd(widths[col]!)).join('  ').trimEnd());
}

/** Keyed by the words that select them, e.g. "users grant-admin". */
export const commands: Record<string, Command> = {
  migrate: {
    args: [],
    summary: 'bring the main database schema up to date',
    // Not through openServices: it migrates too, but would not say which migrations ran.
    async run({ config, io }) {
      const { openMigratedDatabase } = await import('../services.js');
      const { database, ran } = await openMigratedDatabase(config.databaseUrl);
      try {
        io.out(ran.length > 0 ? `Applied ${plural(ran.length, 'migration')}: ${ran.join(', ')}` : 'Database schema already up to date.');
      } finally {
        await database.close();
      }
    },
  },

  'users list': {
    args: [],
    summary: 'list the users (deleted ones are left out)',
    run: ({ config, io }) =>
      withServices(config, async (services) => {
        const users = await services.users.listAll();
        if (users.length === 0) return io.out('No users.');
        const rows = users.map((u) => [u.id, u.email, u.name, u.role, u.createdAt]);
        for (const line of table([['ID', 'EMAIL', 'NAME', 'ROLE', 'CREATED'], ...rows])) io.out(line);
      }),
  },

  'users grant-admin': {
    args: ['email'],
    summary: 'give a user the admin role',
    run: ({ config, args, io }) =>
      withServices(config, async (services) => {
        const user = await userByEmail(services, args[0]!);
        if (user.role === 'admin') return io.out(`${user.email} is already an admin.`);
        if (!(await services.users.setRole({ id: user.id, role: 'admin' }))) throw new CommandFailed(`no user with email ${user.email}`);
        io.out(`${user.email} is now an admin.`);
      }),
  },

  'users revoke-admin': {
    args: ['email'],
    summary: "take a user's admin role away",
    run: ({ config, args, io }) =>
      withServices(config, async (services) => {
        const user = await userByEmail(services, args[0]!);
        if (user.role !== 'admin') return io.out(`${user.email} is not an admin.`);
        if (!(await services.users.setRole({ id: user.id, role: 'user' }))) throw new CommandFailed(`no user with email ${user.email}`);
        io.out(`${user.email} is no longer an admin.`);
        await warnIfNoAdminLeft(services, io);
      }),
  },

  'users delete': {
    args: ['email'],
    summary: 'delete a user (soft) and end all their sessions',
    run: ({ config, args, io }) =>
      withServices(config, async (services) => {
        const user = await userByEmail(services, args[0]!);
        // Deleted first: a login landing between the two steps then fails instead of leaving a live session.
        if (!(await services.users.softDelete({ id: user.id }))) throw new CommandFailed(`no user with email ${user.email}`);
        const ended = await services.sessions.endAllOfUser({ userId: user.id });
        io.out(`Deleted ${user.email}; ended ${plural(ended, 'session')}.`);
        if (user.role === 'admin') await warnIfNoAdminLeft(services, io);
      }),
  },

  'sessions purge': {
    args: [],
    summary: 'remove expired and idle sessions now (the server also does it periodically)',
    run: ({ config, io }) =>
      withServices(config, async (services) => {
        const purged = await services.sessions.purgeExpired();
        io.out(`Purged ${plural(purged, 'expired session')}.`);
      }),
  },
};

commands['integrations reencrypt'] = {
  args: [],
  summary: 'seal every stored integration credential again under the newest ENCRYPTION_KEYS key',
  run: ({ config, io }) =>
    withServices(config, async (services) => {
      const { UnknownKeyError } = await import('../crypto/secret-box.js');
      let outcome;
      try {
        outcome = await services.userIntegrations.reencryptAll();
      } catch (err) {
        if (!(err instanceof UnknownKeyError)) throw err;
        throw new CommandFailed(
          `a record is sealed under key id ${err.keyId}, which is not in ENCRYPTION_KEYS: list the old key after the new one and run again`,
        );
      }
      const { resealed, total } = outcome;
      io.out(`Re-encrypted ${plural(resealed, 'integration record')} (${total - resealed} already under the newest key).`);
    }),
};

export function usageOf(name: string): string {
  return ['trove', name, ...commands[name]!.args.map((a) => `<${a}>`)].join(' ');
}
