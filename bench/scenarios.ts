import os from 'node:os';
import { runLoad, startLoad, type LoadTarget } from './load.js';
import { totalRssMiB, watchProcess, watchProcesses } from './proc-stats.js';
import type { Account } from './profile-client.js';
import type { LoginLoadFigures, ServerFigures } from './report.js';
import type { ServerProcess } from './server-process.js';

export interface Settings {
  connections: number;
  /** Length of one measured run; each server gets `rounds` of them. */
  durationS: number;
  warmupS: number;
  rounds: number;
  loginConnections: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Lets start-up garbage be collected, so "idle" means idle and not "just booted". */
export async function idleRss(server: ServerProcess, others: ServerProcess[] = []): Promise<number> {
  await sleep(2_000);
  return totalRssMiB([server.pid, ...others.map((o) => o.pid)]);
}

export function profileTarget(server: ServerProcess, connections: number, cookie?: string): LoadTarget {
  return { url: `${server.baseUrl}/v1/user/profile`, connections, headers: cookie ? { cookie } : {} };
}

export interface Contender {
  server: ServerProcess;
  target: LoadTarget;
  idleRssMiB: number;
  /** Processes whose RSS and CPU count for this contender; the server alone when absent. */
  pids?: number[];
}

type Run = ServerFigures;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Every contender warms up, then they take turns for `rounds` runs each, and each figure is
 * the median of its runs. This machine is a shared VM whose speed drifts by the minute (steal
 * time); taking turns lets the drift hit all contenders alike instead of whichever ran last.
 */
export async function measureInTurns<K extends string>(
  contenders: Record<K, Contender>,
  settings: Settings,
  say: (line: string) => void,
): Promise<Record<K, ServerFigures>> {
  const keys = Object.keys(contenders) as K[];
  if (settings.warmupS > 0) for (const key of keys) await runLoad(contenders[key].target, settings.warmupS);
  const runs = Object.fromEntries(keys.map((k) => [k, [] as Run[]])) as Record<K, Run[]>;
  for (let round = 1; round <= settings.rounds; round++) {
    say(`round ${round} of ${settings.rounds}`);
    for (const key of keys) {
      const { server, target, idleRssMiB } = contenders[key];
      const pids = contenders[key].pids ?? [server.pid];
      const watch = watchProcesses(pids);
      const load = await runLoad(target, settings.durationS);
      const usage = watch.stop();
      runs[key].push({
        ...load,
        idleRssMiB,
        peakRssMiB: usage.peakRssMiB,
        afterRssMiB: totalRssMiB(pids),
        cpuPercent: usage.cpuPercent,
        loadAverage: os.loadavg()[0] ?? 0,
      });
    }
  }
  const combined = {} as Record<K, ServerFigures>;
  for (const key of keys) {
    const list = runs[key];
    const last = list[list.length - 1]!;
    combined[key] = {
      requestsPerSec: median(list.map((r) => r.requestsPerSec)),
      p50Ms: median(list.map((r) => r.p50Ms)),
      p99Ms: median(list.map((r) => r.p99Ms)),
      requests: list.reduce((n, r) => n + r.requests, 0),
      ok2xx: list.reduce((n, r) => n + r.ok2xx, 0),
      failures: list.reduce((n, r) => n + r.failures, 0),
      durationS: list.reduce((n, r) => n + r.durationS, 0),
      idleRssMiB: last.idleRssMiB,
      peakRssMiB: Math.max(...list.map((r) => r.peakRssMiB)),
      afterRssMiB: last.afterRssMiB,
      cpuPercent: median(list.map((r) => r.cpuPercent)),
      loadAverage: median(list.map((r) => r.loadAverage)),
    };
  }
  return combined;
}

/**
 * The profile load again while `loginConnections` logins with the right password are always in
 * flight: Argon2 runs on libuv's pool, and this shows whether it holds up the event loop.
 */
export async function measureUnderLogins(
  server: ServerProcess,
  target: LoadTarget,
  account: Account,
  settings: Settings,
): Promise<LoginLoadFigures> {
  const logins = startLoad(
    {
      url: `${server.baseUrl}/v1/auth/login`,
      connections: settings.loginConnections,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: account.email, password: account.password }),
    },
    // Stopped as soon as the profile run ends; the margin only bounds it if something hangs.
    settings.durationS + 30,
  );
  try {
    // The hashing queue fills first, so the whole profile window runs under login load.
    await sleep(500);
    const watch = watchProcess(server.pid);
    const profile = await runLoad(target, settings.durationS);
    const usage = watch.stop();
    logins.stop();
    return { loginConnections: settings.loginConnections, profile: { ...profile, ...usage }, logins: await logins.done };
  } finally {
    logins.stop();
  }
}
