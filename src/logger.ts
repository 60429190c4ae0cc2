import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';

/** JSON lines for operators; readable colour lines on a developer's terminal when pino-pretty is installed. */
export function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  const base = { level: config.logLevel };
  if (config.production || !process.stdout.isTTY) return base;
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return { ...base, transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname' } } };
  } catch {
    return base;
  }
}
