import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/app.js';
import { spawnServer, stopAll, type ChildService } from '../helpers/server-process.js';
import { ADMIN, APP_KEY, call, isUnavailable } from './helpers/http.js';

/**
 * More concurrent slow requests than pool connections: the ones that find no
 * connection wait DB_ACQUIRE_TIMEOUT_MS at most, then answer 503 with
 * Retry-After; /health keeps answering. The slowness is real: the test holds
 * the deal's row lock, so stage moves sit in their transactions on it.
 */
const POOL = 3;
const ACQUIRE_MS = 1500;
const MOVES = 12;

let server: ChildService;
let test: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  test = await createTestDatabase();
  server = await spawnServer({
    DATABASE_URL: test.url,
    APP_KEY,
    ADMIN_PASSWORD: ADMIN.password,
    WORKER: 'off',
    DB_POOL_SIZE: String(POOL),
    DB_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_MS),
  });
});
afterAll(async () => {
  await stopAll();
  await test?.drop();
});

describe('a burst larger than the connection pool', () => {
  it('queues with a bounded wait, fails cleanly with 503 + Retry-After, keeps /health answering, and recovers', async () => {
    const pipelines = await call(server.url, '/service/pipelines');
    expect(pipelines.status).toBe(200);
    const stages = pipelines.body.pipelines[0].stages as { id: number }[];
    const created = await call(server.url, '/service/deals/new', { json: { deal: { title: 'Locked deal' } } });
    expect(created.status).toBe(200);
    const dealId = created.body.deal.id as number;

    const holder = new pg.Client({ connectionString: test.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from deals where id = $1 for update', [dealId]);

      const moves = Array.from({ length: MOVES }, (_, i) =>
        call(server.url, `/service/${dealId}/stage`, { json: { stage_id: stages[1 + (i % 2)]!.id }, timeoutMs: 60_000 }),
      );
      // Settle which requests hold connections before asking /health.
      await new Promise((done) => setTimeout(done, 300));
      const health = await call(server.url, '/health', { auth: false, timeoutMs: 20_000 });

      // The requests without a connection end on their own while the lock is still held.
      const early = await Promise.race([
        Promise.all(moves.slice(POOL)).then(() => 'settled'),
        new Promise((done) => setTimeout(() => done('hung'), ACQUIRE_MS + 20_000)),
      ]);
      await holder.query('commit');
      const answers = await Promise.all(moves);

      const refused = answers.filter((answer) => answer.status === 503);
      const done = answers.filter((answer) => answer.status === 200);
      expect(answers.map((answer) => answer.status).filter((status) => status !== 200 && status !== 503)).toEqual([]);
      expect(refused.length).toBeGreaterThanOrEqual(MOVES - POOL);
      expect(done.length).toBeGreaterThanOrEqual(1);
      for (const answer of refused) {
        expect(isUnavailable(answer), JSON.stringify(answer.body)).toBe(true);
        // Waited for a connection (about ACQUIRE_MS), not forever.
        expect(answer.ms).toBeGreaterThanOrEqual(ACQUIRE_MS - 200);
        expect(answer.ms).toBeLessThan(ACQUIRE_MS + 20_000);
      }
      expect(early).not.toBe('hung');
      // /health answered within the same bound: 200, or a 503 in the contract's shape if it found no connection either.
      expect(health.ms).toBeLessThan(ACQUIRE_MS + 15_000);
      expect(health.status === 200 || isUnavailable(health), JSON.stringify(health.body)).toBe(true);

      const after = await call(server.url, `/service/${dealId}/view`);
      expect(after.status).toBe(200);
      expect((await call(server.url, '/health', { auth: false })).status).toBe(200);
      expect(server.child.exitCode).toBeNull();
      console.log(`pool ${POOL}, ${MOVES} moves on a locked deal: ${refused.length} × 503 after ${Math.min(...refused.map((a) => a.ms))}-${Math.max(...refused.map((a) => a.ms))} ms, ${done.length} × 200 after the lock; /health ${health.status} in ${health.ms} ms`);
    } finally {
      await holder.end().catch(() => undefined);
    }
  });
});
