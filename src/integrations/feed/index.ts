/**
 * The feed integration: one RSS 2.0, RSS 1.0 (RDF), Atom or JSON Feed address, optionally behind
 * HTTP basic authentication. Parsing is feedsmith's: ESM with its own types, no network code
 * (we fetch, with our limits), all four formats, entity expansion off in its XML parser.
 */
import { parseFeed, type AnyFeed } from 'feedsmith';
import {
  CredentialsRejectedError,
  type ContentExistsChecker,
  type Credentials,
  type Integration,
  type IntegrationRuntime,
  type Task,
  type TaskOutput,
  type TaskResult,
} from '../contract.js';
import { feedEntries } from './entries.js';
import { DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_MS, FeedFetchError, fetchFeed } from './fetch.js';
import { manifest } from './manifest.js';

export { FeedFetchError } from './fetch.js';

/** The feed's task types: a sync is one `start`, which reads the whole feed. */
export type FeedTaskType = 'start';

export interface FeedRuntime extends IntegrationRuntime {
  /** Response size cap in bytes; 10 MiB unless a test or a setting says otherwise. */
  maxBytes?: number;
}

type Target = { url: URL; username?: string; password?: string } | { problem: string };

export default class FeedIntegration implements Integration {
  static readonly manifest = manifest;

  readonly #target: Target;
  readonly #contentExists: ContentExistsChecker | undefined;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  #inFlight = new AbortController();

  constructor(credentials: Credentials, contentExists?: ContentExistsChecker, runtime?: FeedRuntime) {
    // A bad address is reported by validateAuthentication, where a person sees it, not here.
    this.#target = target(credentials);
    this.#contentExists = contentExists;
    this.#timeoutMs = runtime?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxBytes = runtime?.maxBytes ?? DEFAULT_MAX_BYTES;
  }

  /** Plain HTTP: there is no connection to open and no token to refresh. */
  async initialize(): Promise<void> {}

  async validateAuthentication(): Promise<boolean> {
    try {
      await this.#read();
      return true;
    } catch (error) {
      if (error instanceof FeedFetchError) throw new CredentialsRejectedError(error.message);
      throw error;
    }
  }

  async runTask(task: Task): Promise<TaskResult> {
    if (task.type !== 'start') {
      throw new Error(`The feed integration has no task "${String(task.type)}"; its only task is "start"`);
    }
    let outputs: TaskOutput[];
    try {
      outputs = await this.#read();
    } catch (error) {
      // A refused password needs the person, not a retry; anything else may pass by itself.
      if (error instanceof FeedFetchError && error.auth) throw new CredentialsRejectedError(error.message);
      throw error;
    }
    return { output: await this.#onlyNew(outputs) };
  }

  async shutdown(): Promise<void> {
    this.#inFlight.abort();
    this.#inFlight = new AbortController();
  }

  async #read(): Promise<TaskOutput[]> {
    // Marked as an auth failure: a wrong address, like a wrong password, waits for the person.
    if ('problem' in this.#target) throw new FeedFetchError(this.#target.problem, true);
    const body = await fetchFeed({
      ...this.#target,
      timeoutMs: this.#timeoutMs,
      maxBytes: this.#maxBytes,
      signal: this.#inFlight.signal,
    });
    return feedEntries(parse(body));
  }

  async #onlyNew(outputs: TaskOutput[]): Promise<TaskOutput[]> {
    const seen = new Set<string>();
    const fresh: TaskOutput[] = [];
    for (const output of outputs) {
      if (seen.has(output.externalId)) continue;
      seen.add(output.externalId);
      // One at a time: each check is a database read, and a feed can hold hundreds of entries.
      if (this.#contentExists && (await this.#contentExists({ externalId: output.externalId }))) continue;
      fresh.push(output);
    }
    return fresh;
  }
}

function parse(body: string): AnyFeed<string> {
  try {
    return parseFeed<string>(body);
  } catch {
    if (/^\s*(<!doctype html|<html)/i.test(body)) {
      throw new FeedFetchError('Not an RSS or Atom feed: the address is a web page; use the address of its feed');
    }
    throw new FeedFetchError('Not an RSS or Atom feed');
  }
}

/** The address and login from stored credentials, or why they cannot be used. */
function target(credentials: Credentials): Target {
  const { url, username, password } = credentials;
  if (typeof url !== 'string' || url.trim() === '') return { problem: 'The feed address is missing' };
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return { problem: 'The feed address is not a valid URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { problem: 'The feed address must start with http:// or https://' };
  }
  // fetch refuses such URLs, and a password in an address ends up in logs.
  if (parsed.username || parsed.password) {
    return { problem: 'Put the username and password in their own fields, not in the feed address' };
  }
  if (password !== undefined && username === undefined) return { problem: 'A password was given without a username' };
  if (username !== undefined && typeof username !== 'string') return { problem: 'The username must be text' };
  if (password !== undefined && typeof password !== 'string') return { problem: 'The password must be text' };
  return {
    url: parsed,
    ...(typeof username === 'string' ? { username } : {}),
    ...(typeof password === 'string' ? { password } : {}),
  };
}
