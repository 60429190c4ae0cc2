import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoadFigures } from './load.js';

export interface ServerFigures extends LoadFigures {
  idleRssMiB: number;
  peakRssMiB: number;
  afterRssMiB: number;
  cpuPercent: number;
  /** The machine's 1-minute load average when the run ended: other work on the host skews the figures. */
  loadAverage: number;
}

export interface LoginLoadFigures {
  loginConnections: number;
  /** The profile load while the logins ran, on the same Trove process as scenario (b). */
  profile: LoadFigures & { peakRssMiB: number; cpuPercent: number };
  logins: LoadFigures;
}

export interface BenchResults {
  date: string;
  node: string;
  cpuModel: string;
  cpuCount: number;
  connections: number;
  durationS: number;
  warmupS: number;
  rounds: number;
  scenarios: {
    bareFastify: ServerFigures;
    trove: ServerFigures;
    expressSession: ServerFigures;
    /** Absent when the bench ran with BENCH_SERVICES=0. */
    troveServices?: ServerFigures;
    troveTwoProcesses?: ServerFigures;
  };
  underLogins: LoginLoadFigures;
  targets: Array<{ pass: boolean; target: string; measured: string }>;
  notes: string[];
}

export const LABELS = {
  bareFastify: '(a) bare Fastify route',
  trove: '(b) Trove',
  expressSession: '(c) Express + express-session + connect-session-knex',
  troveServices: '(d) Trove on PostgreSQL + Redis',
  troveTwoProcesses: '(e) 2 Trove processes on PostgreSQL + Redis behind a round-robin proxy',
} as const;

const TARGET_CONNECTIONS = 50;
const TARGET_P99_MS = 20;
const TARGET_IDLE_RSS_MIB = 120;

const f1 = (n: number) => n.toFixed(1);
const f0 = (n: number) => Math.round(n).toLocaleString('en-US');

export function evaluateTargets(r: Omit<BenchResults, 'targets'>): BenchResults['targets'] {
  const { bareFastify: a, trove: b, expressSession: c } = r.scenarios;
  const atConnections = r.connections === TARGET_CONNECTIONS ? '' : ` (measured at ${r.connections}, the target is for ${TARGET_CONNECTIONS})`;
  return [
    {
      pass: b.requestsPerSec >= 0.5 * a.requestsPerSec,
      target: '(b) requests/s ≥ 50% of (a)',
      measured: `${f0(b.requestsPerSec)} = ${f0((b.requestsPerSec / a.requestsPerSec) * 100)}% of ${f0(a.requestsPerSec)}`,
    },
    {
      pass: b.requestsPerSec >= 2 * c.requestsPerSec,
      target: '(b) requests/s ≥ 2× (c)',
      measured: `${f0(b.requestsPerSec)} = ${(b.requestsPerSec / c.requestsPerSec).toFixed(2)}× ${f0(c.requestsPerSec)}`,
    },
    {
      pass: b.p99Ms < TARGET_P99_MS,
      target: `(b) p99 < ${TARGET_P99_MS} ms at ${TARGET_CONNECTIONS} connections`,
      measured: `${f1(b.p99Ms)} ms${atConnections}`,
    },
    {
      pass: b.idleRssMiB < TARGET_IDLE_RSS_MIB,
      target: `Trove idle RSS < ${TARGET_IDLE_RSS_MIB} MB (MiB)`,
      measured: `${f1(b.idleRssMiB)} MiB`,
    },
  ];
}

function row(label: string, s: ServerFigures): string {
  return `| ${label} | ${f0(s.requestsPerSec)} | ${f1(s.p50Ms)} | ${f1(s.p99Ms)} | ${s.failures} | ${f1(s.idleRssMiB)} | ${f1(s.peakRssMiB)} | ${f1(s.afterRssMiB)} | ${f0(s.cpuPercent)} | ${s.loadAverage.toFixed(1)} |`;
}

export function toMarkdown(r: BenchResults): string {
  const { trove } = r.scenarios;
  const { profile, logins, loginConnections } = r.underLogins;
  return [
    '# Trove benchmark: `GET /v1/user/profile`',
    '',
    `${r.date} · Node ${r.node} · ${r.cpuCount} × ${r.cpuModel} · ${r.connections} connections · ` +
      `${r.rounds} rounds of ${r.durationS} s per server, taking turns, after a ${r.warmupS} s warm-up (medians)`,
    '',
    '| Server | req/s | p50 ms | p99 ms | failed | RSS idle MiB | RSS peak MiB | RSS after MiB | CPU % of a core | host load |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...(Object.keys(LABELS) as Array<keyof typeof LABELS>).flatMap((key) => {
      const figures = r.scenarios[key];
      return figures ? [row(LABELS[key], figures)] : [];
    }),
    '',
    `## (b) while ${loginConnections} logins are in flight`,
    '',
    '| Trove profile | req/s | p50 ms | p99 ms | failed |',
    '|---|--:|--:|--:|--:|',
    `| alone | ${f0(trove.requestsPerSec)} | ${f1(trove.p50Ms)} | ${f1(trove.p99Ms)} | ${trove.failures} |`,
    `| with logins | ${f0(profile.requestsPerSec)} | ${f1(profile.p50Ms)} | ${f1(profile.p99Ms)} | ${profile.failures} |`,
    '',
    `Logins: ${f1(logins.ok2xx / logins.durationS)}/s (${logins.ok2xx} succeeded in ${f1(logins.durationS)} s, ` +
      `${logins.failures} failed), login p50 ${f0(logins.p50Ms)} ms, p99 ${f0(logins.p99Ms)} ms. ` +
      `Trove peak RSS ${f1(profile.peakRssMiB)} MiB, CPU ${f0(profile.cpuPercent)}% of a core.`,
    '',
    '## Targets',
    '',
    ...r.targets.map((t) => `- ${t.pass ? 'PASS' : 'FAIL'} ${t.target}: ${t.measured}`),
    '',
    '## Notes',
    '',
    ...r.notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
}

/** Writes through a temp file, so an interrupted run never leaves half a result behind. */
export function writeResults(dir: string, r: BenchResults): { json: string; markdown: string } {
  mkdirSync(dir, { recursive: true });
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
    return file;
  };
  return { json: write('latest.json', `${JSON.stringify(r, null, 2)}\n`), markdown: write('latest.md', toMarkdown(r)) };
}
