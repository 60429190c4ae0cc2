import { readFileSync } from 'node:fs';

// /proc reports CPU time in USER_HZ, which is 100 on every mainstream Linux architecture.
const TICKS_PER_SECOND = 100;

/** Resident memory of one process, MiB (/proc's "kB" are KiB). */
export function rssMiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match?.[1]) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) / 1024;
}

/** User plus system CPU time the process has used so far, seconds. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces or parentheses; the fields after its closing ')' are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

export interface ProcessUsage {
  peakRssMiB: number;
  /** CPU time over wall time, in percent of one core. */
  cpuPercent: number;
}

/** Samples RSS while a load runs, since VmHWM would also count a peak from start-up. */
export function watchProcess(pid: number, intervalMs = 100): { stop(): ProcessUsage } {
  const startedAt = performance.now();
  const startCpu = cpuSeconds(pid);
  let peak = rssMiB(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMiB(pid));
    } catch {
      // The process died; the caller notices through its exit.
    }
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, rssMiB(pid));
      const wallSeconds = (performance.now() - startedAt) / 1000;
      return { peakRssMiB: peak, cpuPercent: ((cpuSeconds(pid) - startCpu) / wallSeconds) * 100 };
    },
  };
}

/** The same over several processes (scenario (e): two Trove processes and the proxy): RSS and CPU summed. */
export function watchProcesses(pids: number[]): { stop(): ProcessUsage } {
  if (pids.length === 1) return watchProcess(pids[0]!);
  const startedAt = performance.now();
  const cpuOf = () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const rssOf = () => pids.reduce((sum, pid) => sum + rssMiB(pid), 0);
  const startCpu = cpuOf();
  let peak = rssOf();
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf());
    } catch {
      // A process died; the caller notices through its exit.
    }
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, rssOf());
      const wallSeconds = (performance.now() - startedAt) / 1000;
      return { peakRssMiB: peak, cpuPercent: ((cpuOf() - startCpu) / wallSeconds) * 100 };
    },
  };
}

export function totalRssMiB(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + rssMiB(pid), 0);
}
