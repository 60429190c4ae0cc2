import { execFile } from 'node:child_process';
import { copyFileSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';

export const projectRoot = path.resolve(import.meta.dirname, '..');

export interface BuiltServers {
  trove: string;
  bareFastify: string;
  expressSession: string;
  roundRobinProxy: string;
  /** Loaded with --import into each server. */
  exitWithParent: string;
}

/**
 * Compiles Trove and the comparison servers to plain JavaScript in `outDir`. The servers run as
 * compiled code, as in production: a TypeScript loader in each server would add tens of MB of
 * RSS and skew the memory figures. Compiling into a temp dir leaves the project's dist/ alone.
 */
export async function buildServers(outDir: string, signal: AbortSignal): Promise<BuiltServers> {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const project = path.join(projectRoot, 'bench', 'tsconfig.servers.json');
  try {
    await promisify(execFile)(process.execPath, [tsc, '-p', project, '--outDir', outDir], {
      cwd: projectRoot,
      timeout: 300_000,
      signal,
    });
  } catch (err) {
    const out = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`compiling the servers failed:\n${out.stdout ?? ''}${out.stderr ?? out.message}`);
  }
  // Trove reads its version from ../package.json, and package imports resolve by walking up to node_modules.
  copyFileSync(path.join(projectRoot, 'package.json'), path.join(outDir, 'package.json'));
  symlinkSync(path.join(projectRoot, 'node_modules'), path.join(outDir, 'node_modules'), 'dir');
  const servers = path.join(outDir, 'bench', 'servers');
  return {
    trove: path.join(outDir, 'src', 'main.js'),
    bareFastify: path.join(servers, 'bare-fastify.js'),
    expressSession: path.join(servers, 'express-session.js'),
    roundRobinProxy: path.join(servers, 'round-robin-proxy.js'),
    exitWithParent: path.join(servers, 'exit-with-parent.js'),
  };
}
