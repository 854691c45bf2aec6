import type { Executor } from '../../db/database.js';

export interface CredentialRow {
  id: number;
  name: string;
  client_id: string;
  user_id: number;
  user_name: string;
  created_at: Date;
  last_used_at: Date | null;
}

/** The secret's hash never leaves this file's selects. */
function credentialQuery(db: Executor) {
  return db
    .selectFrom('api_credentials')
    .innerJoin('users', 'users.id', 'api_credentials.user_id')
    .select([
      'api_credentials.id',
      'api_credentials.name',
      'api_credentials.client_id',
      'api_credentials.user_id',
      'users.name as user_name',
      'api_credentials.created_at',
      'api_credentials.last_used_at',
    ]);
}

export function listCredentials(db: Executor): Promise<CredentialRow[]> {
  return credentialQuery(db).orderBy('api_credentials.id').execute();
}

export function findCredential(db: Executor, id: number): Promise<CredentialRow | undefined> {
  return credentialQuery(db).where('api_credentials.id', '=', id).executeTakeFirst();
}

export async function insertCredential(
  db: Executor,
  values: { name: string; user_id: number; client_id: string; client_secret_hash: string },
): Promise<number> {
  const row = await db.insertInto('api_credentials').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function updateCredential(db: Executor, id: number, values: { name?: string; user_id?: number }): Promise<void> {
  if (values.name === undefined && values.user_id === undefined) return;
  await db.updateTable('api_credentials').set(values).where('id', '=', id).execute();
}

/** Tokens go with the credential (oauth_tokens cascades). */
export async function deleteCredential(db: Executor, id: number): Promise<boolean> {
  const result = await db.deleteFrom('api_credentials').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function revokeTokens(db: Executor, credentialId: number): Promise<void> {
  await db.deleteFrom('oauth_tokens').where('credential_id', '=', credentialId).execute();
}
