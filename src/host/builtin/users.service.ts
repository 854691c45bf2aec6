import type { Db, Executor } from '../../db/database.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import { DUMMY_HASH, hashPassword, verifyPassword } from '../passwords.js';
import { pageInfo } from '../../domain/paging.js';
import { findRole } from './roles.repository.js';
import {
  countActiveAdmins,
  deleteUser,
  findPasswordHash,
  findUser,
  insertUser,
  listUsers,
  lockAdmins,
  updateUser,
  userHasHistory,
  type UserRow,
  type UserValues,
} from './users.repository.js';

export interface UserInput {
  username?: string;
  password?: string;
  name?: string;
  email?: string | null;
  role?: number;
  isActive?: boolean;
}

export const toUserJson = (row: UserRow) => ({
  id: row.id,
  username: row.username,
  name: row.name,
  email: row.email,
  role: { id: row.role_id, name: row.role_name },
  isActive: row.is_active,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export type UserJson = ReturnType<typeof toUserJson>;

/** Nobody could manage the built-in host any more: refuse (the transaction rolls back). */
export async function assertAdminRemains(db: Executor): Promise<void> {
  if ((await countActiveAdmins(db)) === 0) {
    throw new ConflictError('This would leave no active administrator');
  }
}

async function assertRoleExists(db: Executor, roleId: number): Promise<void> {
  if (!(await findRole(db, roleId))) throw ValidationError.field('role', 'Role not found');
}

async function toValues(db: Executor, input: UserInput): Promise<UserValues> {
  if (input.role !== undefined) await assertRoleExists(db, input.role);
  return {
    username: input.username,
    name: input.name,
    email: input.email,
    role_id: input.role,
    is_active: input.isActive,
    password_hash: input.password === undefined ? undefined : await hashPassword(input.password),
  };
}

export async function getUsers(db: Db, query: { search?: string; page: number; limit: number }) {
  const { rows, total } = await listUsers(db, query);
  return { ...pageInfo(total, query.page, query.limit), users: rows.map(toUserJson) };
}

export async function getUser(db: Db, id: number): Promise<UserJson> {
  const row = await findUser(db, id);
  if (!row) throw new NotFoundError('User');
  return toUserJson(row);
}

export type NewUserInput = Required<Pick<UserInput, 'username' | 'password' | 'name' | 'role'>> & Pick<UserInput, 'email'>;

/** `mustChangePassword`: someone else chose the password (an administrator on the pages), so the user is asked for their own. */
export async function createUser(db: Db, input: NewUserInput, options: { mustChangePassword?: boolean } = {}): Promise<UserJson> {
  await assertRoleExists(db, input.role);
  const id = await insertUser(db, {
    must_change_password: options.mustChangePassword ?? false,
    username: input.username,
    password_hash: await hashPassword(input.password),
    name: input.name,
    email: input.email ?? null,
    role_id: input.role,
    is_active: true,
  });
  return getUser(db, id);
}

export async function editUser(db: Db, id: number, input: UserInput): Promise<UserJson> {
  const values = await toValues(db, input); // hash outside the transaction: scrypt takes a while
  await db.transaction().execute(async (trx) => {
    await lockAdmins(trx);
    if (!(await updateUser(trx, id, values))) throw new NotFoundError('User');
    await assertAdminRemains(trx);
  });
  return getUser(db, id);
}

/**
 * A user that deals, notes, tasks or history still name is deactivated, not
 * deleted, so those records keep their owner and author; anyone else is deleted
 * (with their API credentials and tokens).
 */
export async function removeUser(db: Db, id: number): Promise<{ deactivated: boolean }> {
  return db.transaction().execute(async (trx) => {
    await lockAdmins(trx);
    if (!(await findUser(trx, id))) throw new NotFoundError('User');
    const deactivated = await userHasHistory(trx, id);
    if (deactivated) await updateUser(trx, id, { is_active: false });
    else await deleteUser(trx, id);
    await assertAdminRemains(trx);
    return { deactivated };
  });
}

/** An administrator sets someone's password; that user is asked to choose their own at their next visit. */
export async function resetPassword(db: Db, id: number, password: string): Promise<UserJson> {
  const hash = await hashPassword(password);
  if (!(await updateUser(db, id, { password_hash: hash, must_change_password: true }))) throw new NotFoundError('User');
  return getUser(db, id);
}

/**
 * A user changes their own password, proving the current one; this ends the
 * "change the password you were given" reminder (the first-run admin's too).
 */
export async function changeOwnPassword(db: Db, id: number, input: { current_password: string; password: string }): Promise<void> {
  const stored = await findPasswordHash(db, id);
  // A user without a local password (a remote host's) verifies against the dummy hash: never a match.
  if (!(await verifyPassword(input.current_password, stored ?? DUMMY_HASH))) {
    throw ValidationError.field('current_password', 'That is not your current password');
  }
  if (input.password === input.current_password) throw ValidationError.field('password', 'Must differ from your current password');
  await updateUser(db, id, { password_hash: await hashPassword(input.password), must_change_password: false });
}
