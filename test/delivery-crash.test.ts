import { spawn } from 'node:child_process';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { EVENT_NAMES } from '../src/events/events.js';
import { setupApp, type TestContext } from './helpers/app.js';
import { insertDeal, recordEvent, startReceiver, startTestWorker, until } from './helpers/delivery.js';

async function subscribe(t: TestContext, url: string) {
  const response = await t.call({ method: 'POST', url: '/host/webhooks/new', payload: { name: 'Receiver', url, events: EVENT_NAMES } });
  return response.json().webhook as { id: number; secret: string };
}

const queued = async (t: TestContext) =>
  (await sql<{ task_identifier: string; locked_at: Date | null }>`select task_identifier, locked_at from graphile_worker.jobs`.execute(t.db)).rows;

/** The real `npm run worker` entry point, as a separate process we can SIGKILL. */
function spawnWorker(t: TestContext) {
  return spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: t.url,
      APP_KEY: t.config.APP_KEY!.toString('hex'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WORKER_CONCURRENCY: '2',
      LOG_LEVEL: 'silent',
    },
    stdio: 'ignore',
  });
}

describe('worker lifecycle', () => {
  it('a graceful stop finishes the delivery in hand and hands back the jobs not started', async () => {
    const t = await setupApp();
    const receiver = await startReceiver(() => ({ status: 200, delay: 400 }));
    await subscribe(t, receiver.url);
    const dealId = await insertDeal(t.db);
    const worker = await startTestWorker(t, { env: { WORKER_CONCURRENCY: 1 } });
    const first = await recordEvent(t.db, dealId, 'service.deal.created');
    await until(() => receiver.received.length === 1, 'the first delivery in flight');
    const rest: { id: string }[] = [];
    for (let i = 0; i < 5; i++) rest.push(await recordEvent(t.db, dealId, 'service.deal.updated'));

    await worker.stop();
    // The in-flight attempt was recorded before stop() resolved.
    const delivered = await t.db.selectFrom('webhook_deliveries').select('status').where('event_id', '=', first.id).executeTakeFirstOrThrow();
    expect(delivered.status).toBe('succeeded');
    // Nothing was dropped: every other job is back in the queue, unlocked.
    const left = await queued(t);
    expect(left.length).toBeGreaterThan(0);
    expect(left.every((job) => job.locked_at === null)).toBe(true);

    receiver.reply = () => ({ status: 200 });
    await startTestWorker(t);
    await until(() => rest.every((event) => receiver.received.some((r) => r.headers['webhook-id'] === event.id)), 'the rest after a restart');
  });

  it('a worker process killed mid-delivery: a live worker unlocks its job within 30 s and it is delivered again, same event id', async () => {
    const t = await setupApp();
    const receiver = await startReceiver((_request, index) => (index === 0 ? { status: 200, delay: 'never' } : { status: 200 }));
    await subscribe(t, receiver.url);
    const child = spawnWorker(t);
    const exited = new Promise((done) => child.once('exit', done));
    try {
      const event = await recordEvent(t.db, await insertDeal(t.db), 'service.deal.won');
      await until(() => receiver.received.length === 1, 'the child to start delivering', 30_000);
      const beats = await t.db.selectFrom('worker_heartbeats').select('worker_id').execute();
      expect(beats.length).toBeGreaterThan(0); // the child beats under the ids it locks jobs with
      child.kill('SIGKILL');
      await exited;
      const killedAt = Date.now();

      // No clock tricks: the default heartbeat (5 s) and dead-after (20 s) of a live worker do it.
      await startTestWorker(t);
      const delivery = await until(async () => {
        const row = await t.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', event.id).executeTakeFirst();
        return row?.status === 'succeeded' && row;
      }, 'the dead worker job to run again', 40_000);
      expect(Date.now() - killedAt).toBeLessThan(30_000);
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
      expect(delivery.attempt_count).toBe(1);
      const left = await t.db.selectFrom('worker_heartbeats').select('worker_id').execute();
      expect(left.map((row) => row.worker_id)).not.toEqual(expect.arrayContaining(beats.map((row) => row.worker_id)));
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 60_000);

  it('a worker killed mid-delivery loses nothing: once its lock expires the job runs again', async () => {
    const t = await setupApp();
    const receiver = await startReceiver((_request, index) => (index === 0 ? { status: 200, delay: 'never' } : { status: 200 }));
    await subscribe(t, receiver.url);

    const child = spawnWorker(t);
    const exited = new Promise((done) => child.once('exit', done));
    try {
      const event = await recordEvent(t.db, await insertDeal(t.db), 'service.deal.won');
      await until(() => receiver.received.length === 1, 'the child to start delivering', 30_000);
      child.kill('SIGKILL');
      await exited;

      // The dead worker still holds the lock; no attempt was recorded.
      const [job] = await queued(t);
      expect(job).toMatchObject({ task_identifier: 'deliver_event' });
      expect(job!.locked_at).not.toBeNull();
      expect(await t.db.selectFrom('webhook_attempts').select('id').execute()).toHaveLength(0);

      // graphile-worker releases locks older than 4 hours; move the clock of this one past that.
      await sql`update graphile_worker._private_jobs set locked_at = now() - interval '4 hours 1 minute'`.execute(t.db);
      await startTestWorker(t);
      const delivery = await until(async () => {
        const row = await t.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', event.id).executeTakeFirst();
        return row?.status === 'succeeded' && row;
      }, 'the job to run again');
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
      expect(delivery.attempt_count).toBe(1);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
