import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { findSourceRow, pruneInboundRows } from '../src/domain/inbound/inbound.repository.js';
import { createBuiltinHost } from '../src/host/builtin/index.js';
import { createReceiver } from '../src/domain/inbound/receive.service.js';
import { setupApp } from './helpers/app.js';
import { createSource, INBOUND, receive, signature } from './helpers/inbound.js';

const LIMIT = 256 * 1024;

/** A valid receive body of exactly `size` bytes. */
const bodyOfSize = (size: number) => {
  const shell = '{"title":"Big","custom_fields":{"pad":""}}';
  return shell.replace('"pad":""', `"pad":"${'x'.repeat(size - shell.length)}"`);
};

describe('inbound receive: limits and the order of checks', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('accepts 256 KiB and refuses one byte more with 413 in the contract error body', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const exact = bodyOfSize(LIMIT);
    expect(Buffer.byteLength(exact)).toBe(LIMIT);
    expect((await receive(t, source, exact)).statusCode).toBe(200);

    const over = bodyOfSize(LIMIT + 1);
    const res = await receive(t, source, over);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({
      errors: [{ code: 413, message: expect.any(String), details: { limit: LIMIT }, type: 'payload_too_large' }],
    });
    const log = (await t.call({ method: 'GET', url: `${INBOUND}/${source.id}/log` })).json().log;
    expect(log[0]).toMatchObject({ status: 413, outcome: 'rejected' });
  });

  it('checks in order: 404 source, 413 size, 403 signature, 422 body', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const unknown = { id: '00000000-0000-4000-8000-000000000000', secret: source.secret };
    const tooBig = bodyOfSize(LIMIT + 10);
    const noSignature = (id: string, payload: string) =>
      t.app.inject({ method: 'POST', url: `${INBOUND}/${id}/receive`, headers: { 'content-type': 'application/json' }, payload });

    expect((await noSignature(unknown.id, tooBig)).statusCode).toBe(404);
    expect((await noSignature('not-a-uuid', '[]')).statusCode).toBe(404);
    expect((await receive(t, unknown, '{"title":"x"}')).statusCode).toBe(404);
    expect((await noSignature(source.id, tooBig)).statusCode).toBe(413);
    expect((await noSignature(source.id, '[not json')).statusCode).toBe(403);
    expect((await receive(t, { ...source, secret: 'wrong' }, '{"amount":"bad"}')).statusCode).toBe(403);
    expect((await receive(t, source, '{"amount":"bad"}')).statusCode).toBe(422);
  });

  it('rate-limits each source (429 with Retry-After) after the signature and body checks', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const other = await createSource(t);
    // Frozen clock: the bucket does not refill while the test runs, however slow the machine.
    vi.useFakeTimers({ toFake: ['Date'] });
    const body = '{"title":"Burst"}';
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) statuses.push((await receive(t, source, body)).statusCode);
    expect(statuses.every((s) => s === 200)).toBe(true);

    const limited = await receive(t, source, body);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.json().errors[0]).toMatchObject({ code: 429, type: 'rate_limited' });

    // Earlier checks still answer first; other sources are unaffected.
    expect((await receive(t, source, '{"amount":"bad"}')).statusCode).toBe(422);
    expect((await receive(t, { ...source, secret: 'wrong' }, body)).statusCode).toBe(403);
    expect((await receive(t, other, body)).statusCode).toBe(200);

    vi.setSystemTime(Date.now() + 1000);
    expect((await receive(t, source, body)).statusCode).toBe(200);
    expect((await receive(t, source, '{"title":"Another"}', { 'x-service-signature': signature(source.secret, '{"title":"Another"}') })).statusCode).toBe(200);
  });

  it('housekeeping keeps the newest 1000 log entries per source and drops replay keys older than 24 h', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const other = await createSource(t);
    await sql`insert into inbound_receive_log (source_id, status, outcome) select ${source.id}::uuid, 200, 'created' from generate_series(1, 1010)`.execute(t.db);
    await sql`insert into inbound_receive_log (source_id, status, outcome) select ${other.id}::uuid, 200, 'created' from generate_series(1, 5)`.execute(t.db);
    await t.db.insertInto('inbound_idempotency').values([
      { source_id: source.id, key: 'body:old', created_at: new Date(Date.now() - 25 * 3600_000), status: 200, response: '{}' },
      { source_id: source.id, key: 'body:fresh', status: 200, response: '{}' },
    ]).execute();
    const newest = await t.db.selectFrom('inbound_receive_log').select('id').where('source_id', '=', source.id).orderBy('id', 'desc').limit(1000).execute();

    await pruneInboundRows(t.db, source.id);
    const kept = await t.db.selectFrom('inbound_receive_log').select('id').where('source_id', '=', source.id).orderBy('id', 'desc').execute();
    expect(kept).toEqual(newest);
    expect(await t.db.selectFrom('inbound_receive_log').select('id').where('source_id', '=', other.id).execute()).toHaveLength(5);
    expect((await t.db.selectFrom('inbound_idempotency').select('key').execute()).map((r) => r.key)).toEqual(['body:fresh']);
  });

  it('prunes every source that keeps receiving, also when sources take turns', async () => {
    const t = await setupApp();
    const sources = [await createSource(t), await createSource(t)];
    for (const source of sources) {
      await sql`insert into inbound_receive_log (source_id, status, outcome) select ${source.id}::uuid, 200, 'created' from generate_series(1, 1010)`.execute(t.db);
    }
    const warnings: unknown[] = [];
    const receiver = createReceiver({ db: t.db, appKey: t.config.APP_KEY!, ratePerSecond: 100, currency: 'USD', logger: { warn: (details) => void warnings.push(details) }, pruneEvery: 2, contacts: createBuiltinHost({ db: t.db, config: t.config }).contacts });
    // Turns A, B, A, B: each source's second receive prunes it (with one process-wide count, B's would never come).
    for (let i = 0; i < 4; i++) {
      const row = (await findSourceRow(t.db, sources[i % 2]!.id))!;
      const body = `{"title":"Turn ${i}"}`;
      await receiver.receive(row, { title: `Turn ${i}` }, Buffer.from(body), undefined);
    }
    // Pruning runs in the background after the answer.
    await vi.waitFor(async () => {
      for (const source of sources) {
        const { n } = await t.db.selectFrom('inbound_receive_log').select((eb) => eb.fn.countAll<number>().as('n')).where('source_id', '=', source.id).executeTakeFirstOrThrow();
        expect(n).toBe(1000);
      }
    });
    expect(warnings).toEqual([]);
  });
});
