import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { preparedAs } from '../src/db/database.js';
import { createTestDatabase } from './helpers/app.js';

describe('database: prepared statements', () => {
  it('sends a statement marked with preparedAs as a named prepared statement, and still binds its values', async () => {
    const test = await createTestDatabase();
    afterAll(() => test.drop());
    const found = await test.database.db.connection().execute(async (conn) => {
      const answers = [];
      for (const n of [1, 2, 3]) answers.push((await sql<{ doubled: number }>`${preparedAs('test_double')}select ${n}::int * 2 as doubled`.execute(conn)).rows[0]!.doubled);
      const { rows } = await sql<{ name: string; runs: number }>`select name, (generic_plans + custom_plans)::int as runs from pg_prepared_statements`.execute(conn);
      return { answers, prepared: rows };
    });
    expect(found.answers).toEqual([2, 4, 6]);
    expect(found.prepared).toEqual([{ name: 'test_double', runs: 3 }]);
  });
});
