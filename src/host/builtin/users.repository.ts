import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { containsPattern } from '../../domain/paging.js';

export interface UserRow {
  id: number;
  username: string;
  name: string;
  email: string | null;
  role_id: number;
  role_name: string;
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface UserValues {
  username?: string;
  password_hash?: string;
  name?: string;
  email?: string | null;
  role_id?: number;
  is_active?: boolean;
  must_change_password?: boolean;
}

/** The password hash never leaves this file's selects. */
function userQuery(db: Executor) {
  return db
    .selectFrom('users')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select([
      'users.id',
      'users.username',
      'users.name',
      'users.email',
      'users.role_id',
      'roles.name as role_name',
      'users.is_active',
      'users.created_at',
      'users.updated_at',
    ])
    .$narrowType<{ role_id: number }>();
}

export async function listUsers(
  db: Executor,
  options: { search?: string; page: number; limit: number; activeOnly?: boolean },
): Promise<{ rows: UserRow[]; total: number }> {
  let query = userQuery(db);
  if (options.activeOnly) query = query.where('users.is_active', '=', true);
  if (options.search) {
    const pattern = containsPattern(options.search);
    query = query.where((eb) =>
      eb.or([eb('users.username', 'ilike', pattern), eb('users.name', 'ilike', pattern), eb('users.email', 'ilike', pattern)]),
    );
  }
  const [rows, count] = await Promise.all([
    query.orderBy('users.id').limit(options.limit).offset((options.page - 1) * options.limit).execute(),
    query.clearSelect().select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

export function findUser(db: Executor, id: number): Promise<UserRow | undefined> {
  return userQuery(db).where('users.id', '=', id).executeTakeFirst();
}

export async function insertUser(db: Executor, values: Required<Omit<UserValues, 'must_change_password'>> & Pick<UserValues, 'must_change_password'>): Promise<number> {
  const row = await db.insertInto('users').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function updateUser(db: Executor, id: number, values: UserValues): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ ...values, updated_at: new Date() })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The stored hash, for checking a user's current password (it never leaves the service layer). */
export async function findPasswordHash(db: Executor, id: number): Promise<string | null | undefined> {
  const row = await db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirst();
  return row?.password_hash;
}

export async function deleteUser(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('users').where('id', '=', id).execute();
}

/** True when deals, notes, tasks, stage history or inbound sources name the user. */
export async function userHasHistory(db: Executor, id: number): Promise<boolean> {
  const { rows } = await sql<{ used: boolean }>`
    select exists (select 1 from deals where owner_id = ${id} or created_by_id = ${id})
        or exists (select 1 from deal_notes where author_id = ${id})
        or exists (select 1 from deal_tasks where assignee_id = ${id} or created_by_id = ${id})
        or exists (select 1 from deal_stage_history where changed_by_id = ${id})
        or exists (select 1 from inbound_sources where created_by_id = ${id}) as used
  `.execute(db);
  return rows[0]!.used;
}

/** Serializes changes that could remove the last administrator. */
export async function lockAdmins(db: Executor): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('deal-pipeline-admins'))`.execute(db);
}

export async function countActiveAdmins(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('users')
    .innerJoin('roles', 'roles.id', 'users.role_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('users.is_active', '=', true)
    .where('roles.is_admin', '=', true)
    .executeTakeFirstOrThrow();
  return row.n;
}
