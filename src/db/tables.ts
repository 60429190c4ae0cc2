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

export interface Database {
  users: UsersTable;
}
