import type { Executor } from '../../db/database.js';

export interface RoleRow {
  id: number;
  name: string;
  is_admin: boolean;
  permissions: string[];
  created_at: Date;
  updated_at: Date;
}

export interface RoleValues {
  name?: string;
  is_admin?: boolean;
  permissions?: string[];
}

const columns = ['id', 'name', 'is_admin', 'permissions', 'created_at', 'updated_at'] as const;

export function listRoles(db: Executor): Promise<RoleRow[]> {
  return db.selectFrom('roles').select(columns).orderBy('id').execute();
}

export function findRole(db: Executor, id: number): Promise<RoleRow | undefined> {
  return db.selectFrom('roles').select(columns).where('id', '=', id).executeTakeFirst();
}

export function insertRole(db: Executor, values: Required<RoleValues>): Promise<RoleRow> {
  return db.insertInto('roles').values(values).returning(columns).executeTakeFirstOrThrow();
}

export function updateRole(db: Executor, id: number, values: RoleValues): Promise<RoleRow | undefined> {
  return db
    .updateTable('roles')
    .set({ ...values, updated_at: new Date() })
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst();
}

export async function deleteRole(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('roles').where('id', '=', id).execute();
}

/** What still points at a role: users holding it, pipelines limited to it. */
export async function roleUsage(db: Executor, id: number): Promise<{ users: number; pipelines: number }> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom('users').select((e) => e.fn.countAll<number>().as('n')).where('role_id', '=', id).as('users'),
      eb.selectFrom('pipeline_roles').select((e) => e.fn.countAll<number>().as('n')).where('role_id', '=', id).as('pipelines'),
    ])
    .executeTakeFirstOrThrow();
  return { users: Number(row.users), pipelines: Number(row.pipelines) };
}
