import { ConfigError, loadConfig, type Config } from './config.js';
import { loggerOptions } from './logger.js';
import { createTrove } from './server.js';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`Trove cannot start: ${err.message}\n`);
    process.exit(1);
  }

  let trove;
  try {
    trove = await createTrove(config, loggerOptions(config));
  } catch (err) {
    // A database or session store out of reach at start: one line naming its variable, no stack.
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`Trove cannot start: ${err.message}\n`);
    process.exit(1);
  }
  const log = trove.app.log;

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing requests in flight');
    setTimeout(() => {
      log.error('requests still running after 10 s; exiting anyway');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    trove.close().then(
      () => {
        log.info('stopped cleanly');
        process.exitCode = 0;
      },
      (err: unknown) => {
        log.error({ err }, 'error while shutting down');
        process.exitCode = 1;
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  await trove.app.listen({ port: config.port, host: config.host });
  log.info({ dataDir: config.dataDir, env: config.nodeEnv }, 'Trove is ready');
}

main().catch((err: unknown) => {
  process.stderr.write(`Trove failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
