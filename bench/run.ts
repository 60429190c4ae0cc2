import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildServers, projectRoot } from './build.js';
import { profileShape, registerForCookie, type Account } from './profile-client.js';
import { evaluateTargets, LABELS, toMarkdown, writeResults, type BenchResults } from './report.js';
import { idleRss, measureInTurns, measureUnderLogins, profileTarget, type Contender, type Settings } from './scenarios.js';
import { killAllServers, startServer, type ServerProcess } from './server-process.js';
import { createBenchBackend, disposeAllBackends } from './services-backend.js';

function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number ≥ ${min}, got "${raw}"`);
  return value;
}

const settings: Settings = {
  connections: envInt('BENCH_CONNECTIONS', 50, 1),
  durationS: envInt('BENCH_DURATION', 5, 1),
  warmupS: envInt('BENCH_WARMUP', 2, 0),
  rounds: envInt('BENCH_ROUNDS', 3, 1),
  loginConnections: 20,
};
/** BENCH_SERVICES=0 leaves out (d) and (e), for a machine without PostgreSQL and Redis. */
const withServices = process.env.BENCH_SERVICES !== '0';

const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'trove-bench-'));
const buildDir = path.join(tmpRoot, 'build');
const building = new AbortController();

function dataDir(name: string): string {
  const dir = path.join(tmpRoot, name);
  mkdirSync(dir);
  return dir;
}

let cleanedUp = false;
/** Synchronous so it also works from the 'exit' event and signal handlers. */
function cleanUp(): void {
  if (cleanedUp) return;
  cleanedUp = true;
  building.abort();
  killAllServers();
  // The build links to the project's node_modules; unlink it first so nothing can ever follow it.
  const link = path.join(buildDir, 'node_modules');
  if (existsSync(link) && lstatSync(link).isSymbolicLink()) unlinkSync(link);
  rmSync(tmpRoot, { recursive: true, force: true });
}
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping the servers\n`);
    cleanUp();
    // The scenario databases and Redis keys too, but never wait long for that on the way out.
    const exit = () => process.exit(128 + os.constants.signals[signal]);
    setTimeout(exit, 5_000).unref();
    void disposeAllBackends().finally(exit);
  });
}

const say = (line: string) => process.stderr.write(`${line}\n`);

function packageVersion(name: string): string {
  const file = path.join(projectRoot, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

async function main(): Promise<void> {
  const loadAtStart = os.loadavg()[0] ?? 0;
  say(`compiling Trove and the comparison servers…`);
  const built = await buildServers(buildDir, building.signal);
  const preload = built.exitWithParent;
  const account: Account = { email: 'bench@example.com', name: 'Bench User', password: randomBytes(18).toString('base64url') };

  const troveEnv = {
    NODE_ENV: 'production',
    DATA_DIR: dataDir('trove'),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SESSION_SECRET: randomBytes(32).toString('base64url'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    OAUTH_REDIRECT_BASE_URL: 'https://127.0.0.1',
    // Only the login scenario needs this; the profile route never consults the limiter.
    LOGIN_RATE_LIMIT_MAX: '1000000',
  };
  const expressEnv = { NODE_ENV: 'production', BENCH_DATA_DIR: dataDir('express') };

  // All of them run side by side (idle ones take no CPU), so they can take turns under load.
  say(withServices ? 'starting the servers (three, then Trove on PostgreSQL + Redis: one, and two behind a proxy)' : 'starting the three servers');
  const servers = {
    bareFastify: await startServer({ name: 'bare-fastify', script: built.bareFastify, preload, env: {} }),
    trove: await startServer({ name: 'trove', script: built.trove, preload, env: troveEnv }),
    expressSession: await startServer({ name: 'express-session', script: built.expressSession, preload, env: expressEnv }),
  };
  const idle = {
    bareFastify: await idleRss(servers.bareFastify),
    trove: await idleRss(servers.trove),
    expressSession: await idleRss(servers.expressSession),
  };
  const troveCookie = await registerForCookie(servers.trove.baseUrl, account);
  const expressCookie = await registerForCookie(servers.expressSession.baseUrl, account);
  const shapes = {
    bareFastify: await profileShape(servers.bareFastify.baseUrl),
    trove: await profileShape(servers.trove.baseUrl, troveCookie),
    expressSession: await profileShape(servers.expressSession.baseUrl, expressCookie),
  };
  for (const other of [shapes.bareFastify, shapes.expressSession]) {
    if (other !== shapes.trove) throw new Error(`profile answers differ:\n  Trove: ${shapes.trove}\n  other: ${other}`);
  }

  // (d) one Trove, (e) two Troves and the proxy: each scenario on a database and prefix of its own.
  const scaled = withServices ? await startScaledOut(built, preload, troveEnv, account, shapes.trove) : undefined;

  say(`profile load: ${settings.warmupS} s warm-up each, then ${settings.rounds} rounds of ${settings.durationS} s each, taking turns`);
  const troveTarget = profileTarget(servers.trove, settings.connections, troveCookie);
  const scenarios: BenchResults['scenarios'] = await measureInTurns<keyof typeof LABELS>(
    {
      bareFastify: { server: servers.bareFastify, target: profileTarget(servers.bareFastify, settings.connections), idleRssMiB: idle.bareFastify },
      trove: { server: servers.trove, target: troveTarget, idleRssMiB: idle.trove },
      expressSession: {
        server: servers.expressSession,
        target: profileTarget(servers.expressSession, settings.connections, expressCookie),
        idleRssMiB: idle.expressSession,
      },
      // Left out without services: measureInTurns takes turns among the keys present.
      ...((scaled?.contenders ?? {}) as Scaled['contenders']),
    },
    settings,
    say,
  );
  await servers.bareFastify.stop();
  await servers.expressSession.stop();
  await scaled?.stop();

  say(`${LABELS.trove} with ${settings.loginConnections} logins in flight: ${settings.durationS * settings.rounds} s`);
  const underLogins = await measureUnderLogins(servers.trove, troveTarget, account, {
    ...settings,
    durationS: settings.durationS * settings.rounds,
  });
  await servers.trove.stop();

  const failed = Object.entries(scenarios).filter(([, s]) => s.failures > 0);
  const partial: Omit<BenchResults, 'targets'> = {
    date: new Date().toISOString(),
    node: process.version,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown CPU',
    cpuCount: os.availableParallelism(),
    connections: settings.connections,
    durationS: settings.durationS,
    warmupS: settings.warmupS,
    rounds: settings.rounds,
    scenarios,
    underLogins,
    notes: [
      `Every server runs in its own process, from JavaScript compiled by tsc; autocannon runs in the bench's process on the same ${os.availableParallelism()} cores. The servers take turns: ${settings.rounds} rounds of ${settings.durationS} s each after a ${settings.warmupS} s warm-up, and every figure is the median of a server's rounds (peak RSS: the maximum). Load average when the run began: ${loadAtStart.toFixed(2)}.`,
      `(a) fastify ${packageVersion('fastify')}, one route with a response schema, no session, no database.`,
      '(b) Trove compiled from src, run with NODE_ENV=production, LOG_LEVEL=warn, and LOGIN_RATE_LIMIT_MAX=1000000 so the login scenario is not throttled (the profile route never consults the limiter).',
      `(c) express ${packageVersion('express')}, express-session ${packageVersion('express-session')} (resave and saveUninitialized off, so each request reads the session and touches its expiry), ` +
        `connect-session-knex ${packageVersion('connect-session-knex')} on knex ${packageVersion('knex')} with better-sqlite3; the user read with a prepared better-sqlite3 statement; both SQLite files in WAL with synchronous=NORMAL, like Trove's access-time writes (express-session touches the session on every request; Trove writes access times once a second).`,
      'host load is the 1-minute load average when each run ended; on this machine anything well above its core count means other processes took CPU from the server and from autocannon.',
      ...(withServices
        ? [
            '(d) the same compiled Trove with DATABASE_URL=postgres://… and SESSION_STORE_URL=redis://… (the machine\'s PostgreSQL and Redis, shared with other work; a fresh database and key prefix, dropped afterwards). ' +
              '(e) two such processes on one database and prefix behind bench/servers/round-robin-proxy.ts (node:http, kept-alive upstream connections), itself a third process; its RSS and CPU columns are the sum of the three processes. ' +
              'PostgreSQL and Redis run on the same 2 cores and their CPU is not in the columns; with two cores, a second Trove process mostly adds contention here rather than capacity.',
          ]
        : ['(d) and (e) were left out (BENCH_SERVICES=0).']),
      `Logins: POST /v1/auth/login with the right password on ${settings.loginConnections} connections, each always waiting for an answer; Argon2id 19 MiB, 2 passes.`,
      ...(failed.length > 0 ? [`Some requests failed (${failed.map(([k, s]) => `${k}: ${s.failures}`).join(', ')}); those figures are suspect.`] : []),
    ],
  };
  const results: BenchResults = { ...partial, targets: evaluateTargets(partial) };
  const files = writeResults(path.join(projectRoot, 'bench', 'results'), results);
  process.stdout.write(`\n${toMarkdown(results)}\n`);
  say(`written: ${path.relative(projectRoot, files.json)}, ${path.relative(projectRoot, files.markdown)}`);
}

interface Scaled {
  contenders: Record<'troveServices' | 'troveTwoProcesses', Contender>;
  stop(): Promise<void>;
}

async function startScaledOut(
  built: Awaited<ReturnType<typeof buildServers>>,
  preload: string,
  troveEnv: Record<string, string>,
  account: Account,
  expectedShape: string,
): Promise<Scaled> {
  const single = await createBenchBackend();
  const shared = await createBenchBackend();
  const one = await startServer({ name: 'trove-pg-redis', script: built.trove, preload, env: { ...troveEnv, DATA_DIR: dataDir('trove-d'), ...single.env } });
  const first = await startServer({ name: 'trove-e1', script: built.trove, preload, env: { ...troveEnv, DATA_DIR: dataDir('trove-e1'), ...shared.env } });
  const second = await startServer({ name: 'trove-e2', script: built.trove, preload, env: { ...troveEnv, DATA_DIR: dataDir('trove-e2'), ...shared.env } });
  const proxy = await startServer({
    name: 'round-robin-proxy',
    script: built.roundRobinProxy,
    preload,
    env: { BENCH_UPSTREAMS: `${first.baseUrl},${second.baseUrl}` },
  });
  const oneCookie = await registerForCookie(one.baseUrl, account);
  // Registered through the proxy: the session made on one process is then read by both.
  const twoCookie = await registerForCookie(proxy.baseUrl, account);
  for (const [name, base, cookie] of [['(d)', one.baseUrl, oneCookie], ['(e)', proxy.baseUrl, twoCookie]] as const) {
    for (let i = 0; i < 2; i++) {
      const shape = await profileShape(base, cookie);
      if (shape !== expectedShape) throw new Error(`profile answers differ:\n  Trove: ${expectedShape}\n  ${name}: ${shape}`);
    }
  }
  return {
    contenders: {
      troveServices: { server: one, target: profileTarget(one, settings.connections, oneCookie), idleRssMiB: await idleRss(one) },
      troveTwoProcesses: {
        server: proxy,
        target: profileTarget(proxy, settings.connections, twoCookie),
        idleRssMiB: await idleRss(first, [second, proxy]),
        pids: [first.pid, second.pid, proxy.pid],
      },
    },
    async stop() {
      for (const server of [proxy, first, second, one]) await server.stop();
      await single.dispose();
      await shared.dispose();
    },
  };
}

main()
  .catch((err: unknown) => {
    say(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  })
  .finally(async () => {
    cleanUp();
    await disposeAllBackends();
    // Keep-alive sockets or timers left by a failed step must not keep the bench running.
    process.exit();
  });
