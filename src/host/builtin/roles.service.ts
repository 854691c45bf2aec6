import type { Db } from '../../db/database.js';
import { ConflictError, NotFoundError } from '../../http/errors.js';
import { lockAdmins } from './users.repository.js';
import { assertAdminRemains } from './users.service.js';
import { deleteRole, findRole, insertRole, listRoles, roleUsage, updateRole, type RoleRow, type RoleValues } from './roles.repository.js';

export interface RoleInput {
  name?: string;
  permissions?: string[];
  isAdmin?: boolean;
}

export const toRoleJson = (row: RoleRow) => ({
  id: row.id,
  name: row.name,
  permissions: row.permissions,
  isAdmin: row.is_admin,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export type RoleJson = ReturnType<typeof toRoleJson>;

const toValues = (input: RoleInput): RoleValues => ({
  name: input.name,
  is_admin: input.isAdmin,
  permissions: input.permissions && [...new Set(input.permissions)],
});

export async function getRoles(db: Db): Promise<RoleJson[]> {
  return (await listRoles(db)).map(toRoleJson);
}

export async function getRole(db: Db, id: number): Promise<RoleJson> {
  const row = await findRole(db, id);
  if (!row) throw new NotFoundError('Role');
  return toRoleJson(row);
}

export async function createRole(db: Db, input: Required<Pick<RoleInput, 'name'>> & RoleInput): Promise<RoleJson> {
  const values = toValues(input);
  return toRoleJson(await insertRole(db, { name: input.name, is_admin: values.is_admin ?? false, permissions: values.permissions ?? [] }));
}

/** Changing a role changes what its users may do; taking admin away must leave some active admin. */
export async function editRole(db: Db, id: number, input: RoleInput): Promise<RoleJson> {
  return db.transaction().execute(async (trx) => {
    await lockAdmins(trx);
    const row = await updateRole(trx, id, toValues(input));
    if (!row) throw new NotFoundError('Role');
    if (input.isAdmin === false) await assertAdminRemains(trx);
    return toRoleJson(row);
  });
}

/**
 * A role still held by users, or still limiting the visibility of a pipeline, is
 * kept: deleting the only role of a limited pipeline would silently open it to all.
 */
export async function removeRole(db: Db, id: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockAdmins(trx);
    if (!(await findRole(trx, id))) throw new NotFoundError('Role');
    const usage = await roleUsage(trx, id);
    if (usage.users > 0) throw new ConflictError(`The role is held by ${usage.users} user(s); give them another role first`, usage);
    if (usage.pipelines > 0) {
      throw new ConflictError(`The role limits the visibility of ${usage.pipelines} pipeline(s); change those first`, usage);
    }
    await deleteRole(trx, id);
  });
}
