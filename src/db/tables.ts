export type Role = 'user' | 'admin';

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  role: Role;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export type UserIntegrationStatus = 'connected' | 'syncing' | 'error' | 'disconnected';

export interface UserIntegrationsTable {
  id: string;
  user_id: string;
  integration: string;
  status: UserIntegrationStatus;
  /** Sealed JSON (crypto/secret-box.ts); never returned, never logged. */
  credentials: string;
  last_error: string | null;
  item_count: number;
  last_sync_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface Database {
  users: UsersTable;
  user_integrations: UserIntegrationsTable;
}
