import { ConfigError } from '../../config.js';
import type { SessionStore } from '../store.js';
import { SqliteSessionStore } from './sqlite.js';

/** Picks the session store from SESSION_STORE_URL's scheme. */
export function openSessionStore(url: string): SessionStore {
  if (url.startsWith('sqlite:')) return new SqliteSessionStore(url);
  throw new ConfigError('SESSION_STORE_URL: Redis is not supported yet; use sqlite:<path>');
}
