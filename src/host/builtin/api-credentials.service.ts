import { randomBytes } from 'node:crypto';
import type { Db, Executor } from '../../db/database.js';
import { NotFoundError, ValidationError } from '../../http/errors.js';
import { sha256 } from './auth.js';
import {
  deleteCredential,
  findCredential,
  insertCredential,
  listCredentials,
  revokeTokens,
  updateCredential,
  type CredentialRow,
} from './api-credentials.repository.js';
import { findUser } from './users.repository.js';

export const toCredentialJson = (row: CredentialRow) => ({
  id: row.id,
  name: row.name,
  client_id: row.client_id,
  user: { id: row.user_id, name: row.user_name },
  createdAt: row.created_at.toISOString(),
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
});

export type CredentialJson = ReturnType<typeof toCredentialJson>;

async function assertActiveUser(db: Executor, userId: number): Promise<void> {
  const user = await findUser(db, userId);
  if (!user?.is_active) throw ValidationError.field('user', 'Must be an active user');
}

export async function getCredentials(db: Db): Promise<CredentialJson[]> {
  return (await listCredentials(db)).map(toCredentialJson);
}

export async function getCredential(db: Db, id: number): Promise<CredentialJson> {
  const row = await findCredential(db, id);
  if (!row) throw new NotFoundError('API credential');
  return toCredentialJson(row);
}

/** The secret is 32 random bytes, returned this once and stored as its SHA-256 (see auth.ts). */
export async function createCredential(
  db: Db,
  input: { name: string; user: number },
): Promise<CredentialJson & { client_secret: string }> {
  await assertActiveUser(db, input.user);
  const clientSecret = randomBytes(32).toString('base64url');
  const id = await insertCredential(db, {
    name: input.name,
    user_id: input.user,
    client_id: randomBytes(16).toString('hex'),
    client_secret_hash: sha256(clientSecret),
  });
  return { ...(await getCredential(db, id)), client_secret: clientSecret };
}

/** Moving a credential to another user revokes its tokens: they act as the old user. */
export async function editCredential(db: Db, id: number, input: { name?: string; user?: number }): Promise<CredentialJson> {
  if (input.user !== undefined) await assertActiveUser(db, input.user);
  await db.transaction().execute(async (trx) => {
    const before = await findCredential(trx, id);
    if (!before) throw new NotFoundError('API credential');
    await updateCredential(trx, id, { name: input.name, user_id: input.user });
    if (input.user !== undefined && input.user !== before.user_id) await revokeTokens(trx, id);
  });
  return getCredential(db, id);
}

export async function removeCredential(db: Db, id: number): Promise<void> {
  if (!(await deleteCredential(db, id))) throw new NotFoundError('API credential');
}
