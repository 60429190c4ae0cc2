#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { commands, CommandFailed, usageOf, type Io } from './cli/commands.js';
import { ConfigError, loadConfig } from './config.js';

/** Exit codes: 0 done, 1 failed (unknown user, bad configuration, …), 2 wrong usage. */
const FAILED = 1;
const USAGE = 2;

const io: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  warn: (line) => process.stderr.write(`trove: ${line}\n`),
};

function helpText(): string {
  const names = Object.keys(commands);
  const usages = names.map(usageOf);
  const width = Math.max(...usages.map((u) => u.length));
  return [
    'Usage: trove <command>',
    '',
    'Commands:',
    ...names.map((name, i) => `  ${usages[i]!.padEnd(width)}  ${commands[name]!.summary}`),
    `  ${'trove help'.padEnd(width)}  show this text (also --help)`,
    '',
    'Reads the same environment as the server: DATA_DIR, DATABASE_URL, SESSION_STORE_URL, NODE_ENV, …',
    'Exit codes: 0 done, 1 failed (unknown user, bad configuration), 2 wrong usage.',
    '',
  ].join('\n');
}

/** The longest run of leading words that names a command ("users delete" before "users"). */
function findCommand(positionals: string[]): { name: string; args: string[] } | undefined {
  for (let words = Math.min(2, positionals.length); words > 0; words--) {
    const name = positionals.slice(0, words).join(' ');
    if (commands[name]) return { name, args: positionals.slice(words) };
  }
  return undefined;
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } }, allowPositionals: true });
  } catch (err) {
    io.warn(`${(err as Error).message} (run "trove help" for usage)`);
    return USAGE;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals[0] === 'help') {
    process.stdout.write(helpText());
    return 0;
  }
  if (positionals.length === 0) {
    process.stderr.write(helpText());
    return USAGE;
  }
  const found = findCommand(positionals);
  if (!found) {
    const group = Object.keys(commands).filter((name) => name.startsWith(`${positionals[0]} `));
    io.warn(
      group.length > 0 && positionals.length === 1
        ? `usage: trove ${positionals[0]} <${group.map((name) => name.split(' ')[1]).join('|')}> …`
        : `unknown command "${positionals.join(' ')}"; run "trove help" for the list`,
    );
    return USAGE;
  }
  const command = commands[found.name]!;
  if (found.args.length !== command.args.length) {
    io.warn(`usage: ${usageOf(found.name)}`);
    return USAGE;
  }

  try {
    await command.run({ config: loadConfig(), args: found.args, io });
    return 0;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof CommandFailed) {
      io.warn(err.message);
      return FAILED;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    // exitCode rather than exit(): output piped to another program is flushed first.
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`trove: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = FAILED;
  },
);
