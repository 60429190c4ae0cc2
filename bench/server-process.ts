import { spawn, type ChildProcess } from 'node:child_process';

/** Keep in step with the `start` script in package.json. */
export const NODE_FLAGS = ['--max-semi-space-size=8'];
import { once } from 'node:events';
import { createServer } from 'node:net';
import { pathToFileURL } from 'node:url';

export interface ServerProcess {
  name: string;
  pid: number;
  baseUrl: string;
  /** SIGTERM, then SIGKILL if it has not exited within the grace period. */
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
const FORWARDED_LINES = 20;

const running = new Set<ChildProcess>();

/** Last resort on exit or a signal: no server may outlive the bench. */
export function killAllServers(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  probe.close();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs one server in its own process, so the load generator never shares its event loop and
 * RSS and CPU can be read per server. Only PATH and the given variables reach it, so settings
 * in the caller's environment cannot change what is measured.
 */
export async function startServer(options: {
  name: string;
  script: string;
  preload: string;
  env: Record<string, string>;
}): Promise<ServerProcess> {
  const { name } = options;
  const port = await freePort();
  // The same V8 flag `npm start` gives Trove, for every server alike, so the comparison stays fair.
  const child = spawn(process.execPath, [...NODE_FLAGS, '--import', pathToFileURL(options.preload).href, options.script], {
    env: { PATH: process.env.PATH ?? '', ...options.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  running.add(child);
  const pid = child.pid;
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      exitCode = code ?? (signal ? 128 : null);
      resolve();
    });
    child.once('error', () => resolve());
  });

  const recent: string[] = [];
  let forwarded = 0;
  let stopping = false;
  let linesWhileStopping = 0;
  const onOutput = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      recent.push(line);
      if (recent.length > 40) recent.shift();
      if (stopping) linesWhileStopping++;
      // A server that logs on every request under load would drown the report; the first lines tell the story.
      else if (forwarded++ < FORWARDED_LINES) process.stderr.write(`  [${name}] ${line}\n`);
    }
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);

  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    if (exitCode !== undefined || pid === undefined) {
      throw new Error(`${name} exited during start-up (code ${exitCode}):\n${recent.join('\n')}`);
    }
    try {
      await fetch(`${baseUrl}/`, { signal: AbortSignal.timeout(1_000) });
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${name} did not answer within ${STARTUP_TIMEOUT_MS / 1000} s:\n${recent.join('\n')}`);
      }
      await sleep(100);
    }
  }

  return {
    name,
    pid,
    baseUrl,
    async stop() {
      if (exitCode !== undefined) return;
      // Work the load generator abandoned (queued logins) may still finish, or fail, during shutdown;
      // that is counted here rather than mixed into the figures' output.
      stopping = true;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
      if (linesWhileStopping > 0) {
        process.stderr.write(`  [${name}] logged ${linesWhileStopping} line(s) while shutting down; last: ${recent.at(-1) ?? ''}\n`);
      }
    },
  };
}
