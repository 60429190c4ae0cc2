/**
 * Preloaded into every benchmarked server. If the bench itself is killed outright (SIGKILL, a
 * closed terminal) it cannot clean up; its IPC channel closes, and the server ends with it
 * instead of holding a port and a temp dir for ever.
 */
if (process.channel) {
  process.channel.unref();
  process.on('disconnect', () => process.exit(0));
}

export {};
