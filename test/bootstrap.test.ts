import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { bootstrap } from '../src/host/builtin/bootstrap.js';
import { verifyPassword } from '../src/host/passwords.js';
import { createTestDatabase } from './helpers/app.js';

const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of drops) await drop();
});

/** An empty, migrated database of this test's own (no first-run data). */
async function emptyDatabase() {
  const { database, drop } = await createTestDatabase();
  drops.push(drop);
  return database;
}

async function snapshot(db: Db) {
  return {
    roles: await db.selectFrom('roles').selectAll().orderBy('id').execute(),
    users: await db.selectFrom('users').selectAll().orderBy('id').execute(),
    pipelines: await db.selectFrom('pipelines').selectAll().orderBy('id').execute(),
    stages: await db.selectFrom('stages').selectAll().orderBy('id').execute(),
  };
}

describe('first-run bootstrap', () => {
  it('creates the Administrator role, the admin user and the Sales pipeline of contract section 6', async () => {
    const { db } = await emptyDatabase();
    const result = await bootstrap(db, { username: 'boss', password: 'a-long-admin-password' });
    expect(result.admin).toEqual({ username: 'boss', password: 'a-long-admin-password', generated: false });

    const { roles, users, pipelines } = await snapshot(db);
    expect(roles).toHaveLength(1);
    expect(roles[0]).toMatchObject({ name: 'Administrator', is_admin: true });
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ username: 'boss', role_id: roles[0]!.id, is_active: true });
    expect(await verifyPassword('a-long-admin-password', users[0]!.password_hash!)).toBe(true);
    expect(pipelines).toHaveLength(1);
    expect(pipelines[0]).toMatchObject({ name: 'Sales', is_default: true });
    const stages = await db.selectFrom('stages').select(['name', 'type', 'probability', 'position']).orderBy('position').execute();
    expect(stages).toEqual([
      { name: 'Qualification', type: 'open', probability: 10, position: 1 },
      { name: 'Discovery', type: 'open', probability: 20, position: 2 },
      { name: 'Proposal', type: 'open', probability: 40, position: 3 },
      { name: 'Negotiation', type: 'open', probability: 70, position: 4 },
      { name: 'Won', type: 'won', probability: 100, position: 5 },
      { name: 'Lost', type: 'lost', probability: 0, position: 6 },
    ]);
  });

  it('changes nothing on a second run, not even the admin password', async () => {
    const { db } = await emptyDatabase();
    await bootstrap(db, { username: 'admin', password: 'first-admin-password' });
    const before = await snapshot(db);
    const second = await bootstrap(db, { username: 'admin', password: 'another-admin-password' });
    expect(second).toEqual({});
    expect(await snapshot(db)).toEqual(before);
  });

  it('generates a password when none is configured', async () => {
    const { db } = await emptyDatabase();
    const result = await bootstrap(db, { username: 'admin' });
    expect(result.admin?.generated).toBe(true);
    expect(result.admin!.password.length).toBeGreaterThanOrEqual(16);
    const user = await db.selectFrom('users').select('password_hash').executeTakeFirstOrThrow();
    expect(await verifyPassword(result.admin!.password, user.password_hash!)).toBe(true);
  });

  it('seeds once when several processes start at the same time', async () => {
    const { db } = await emptyDatabase();
    const results = await Promise.all([1, 2, 3, 4].map(() => bootstrap(db, { username: 'admin', password: 'concurrent-password' })));
    expect(results.filter((result) => result.admin)).toHaveLength(1);
    const { roles, users, pipelines, stages } = await snapshot(db);
    expect([roles.length, users.length, pipelines.length, stages.length]).toEqual([1, 1, 1, 6]);
  });
});

describe('migrations', () => {
  it('change nothing when run again on a migrated database', async () => {
    const database = await emptyDatabase();
    const applied = () => sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
    const before = (await applied()).rows;
    expect(before.length).toBeGreaterThan(0);
    const logged: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(line) });
    await migrateToLatest(database, logger);
    expect((await applied()).rows).toEqual(before);
    expect(logged.filter((line) => line.includes('migration applied'))).toEqual([]);
  });
});
