import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/database.js';
import type { StageType } from '../../src/db/schema.js';
import type { DealCreateInput } from '../../src/domain/deals/deal-context.js';
import { createDealsInTransaction } from '../../src/domain/deals/deals.service.js';
import { hashPassword } from '../../src/host/passwords.js';
import type { Permission } from '../../src/host/permissions.js';
import { createMauticContact, createMauticUser, testHost } from './host-mode.js';

/** Fixtures written straight to the database; each test makes what it needs. */

const unique = () => randomBytes(4).toString('hex');

export async function createRole(db: Db, permissions: Permission[] = [], options: { isAdmin?: boolean; name?: string } = {}) {
  return db
    .insertInto('roles')
    .values({ name: options.name ?? `role-${unique()}`, permissions, is_admin: options.isAdmin ?? false })
    .returning(['id', 'name'])
    .executeTakeFirstOrThrow();
}

export interface TestUser {
  id: number;
  username: string;
  password: string;
  name: string;
  roleId: number;
}

/** A user with a role holding exactly these permissions. */
export async function createUser(db: Db, permissions: Permission[] = [], options: { roleId?: number; name?: string } = {}): Promise<TestUser> {
  const roleId = options.roleId ?? (await createRole(db, permissions)).id;
  const username = `user-${unique()}`;
  const password = `pw-${unique()}-${unique()}`;
  const name = options.name ?? `User ${username}`;
  if (testHost === 'mautic') {
    const role = await db.selectFrom('roles').select('name').where('id', '=', roleId).executeTakeFirstOrThrow();
    return { id: await createMauticUser(db, { username, password, name, roleId, roleName: role.name }), username, password, name, roleId };
  }
  const row = await db
    .insertInto('users')
    .values({ username, name, email: `${username}@example.test`, password_hash: await hashPassword(password), role_id: roleId })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, username, password, name, roleId };
}

export async function createContact(db: Db, values: { email?: string; first_name?: string; last_name?: string; company?: string } = {}) {
  if (testHost === 'mautic') {
    return createMauticContact(db, { email: values.email ?? `c-${unique()}@example.test`, first_name: values.first_name ?? 'Ann', last_name: values.last_name ?? 'Lee', company: values.company ?? 'Acme' });
  }
  return db
    .insertInto('contacts')
    .values({ email: values.email ?? `c-${unique()}@example.test`, first_name: values.first_name ?? 'Ann', last_name: values.last_name ?? 'Lee', company: values.company ?? 'Acme' })
    .returning(['id', 'email'])
    .executeTakeFirstOrThrow();
}

export interface TestPipeline {
  id: number;
  name: string;
  stages: { id: number; name: string; type: StageType }[];
}

/** A pipeline with stages (default: Open A, Open B, Won, Lost), optionally limited to roles. */
export async function createPipeline(
  db: Db,
  options: { name?: string; stages?: { name: string; type: StageType }[]; roleIds?: number[] } = {},
): Promise<TestPipeline> {
  const stages = options.stages ?? [
    { name: 'Open A', type: 'open' },
    { name: 'Open B', type: 'open' },
    { name: 'Won', type: 'won' },
    { name: 'Lost', type: 'lost' },
  ];
  const pipeline = await db.insertInto('pipelines').values({ name: options.name ?? `Pipeline ${unique()}` }).returning(['id', 'name']).executeTakeFirstOrThrow();
  const rows = await db
    .insertInto('stages')
    .values(stages.map((stage, index) => ({ ...stage, pipeline_id: pipeline.id, position: index + 1 })))
    .returning(['id', 'name', 'type'])
    .execute();
  if (options.roleIds?.length) {
    await db.insertInto('pipeline_roles').values(options.roleIds.map((role_id) => ({ pipeline_id: pipeline.id, role_id }))).execute();
  }
  return { ...pipeline, stages: rows };
}

export async function defaultPipeline(db: Db): Promise<TestPipeline> {
  const pipeline = await db.selectFrom('pipelines').select(['id', 'name']).where('is_default', '=', true).executeTakeFirstOrThrow();
  const stages = await db.selectFrom('stages').select(['id', 'name', 'type']).where('pipeline_id', '=', pipeline.id).orderBy('position').execute();
  return { ...pipeline, stages };
}

/**
 * A deal made through the same in-transaction rules as the API (history row and
 * created event included), as `owner` and `createdBy` say (default: admin id 1).
 */
export async function createDeal(db: Db, values: Partial<DealCreateInput> = {}): Promise<{ id: number }> {
  const createdById = values.createdById === undefined ? 1 : values.createdById;
  const input = { title: `Deal ${unique()}`, currency: 'USD', ownerId: createdById, ...values, createdById };
  const [created] = await db.transaction().execute((trx) =>
    createDealsInTransaction(trx, [{ ctx: { changedBy: { id: createdById, name: 'Factory' } }, input }]),
  );
  return created!;
}
