import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { setupApp } from './helpers/app.js';
import { createSource, receive } from './helpers/inbound.js';

/**
 * Receives that arrive together are written together (group commit). These
 * tests send many at once and check that sharing a transaction changes nothing
 * a sender or an integrator can see.
 */
describe('inbound receive: group commit', () => {
  it('writes concurrent receives in shared transactions, each with its own deal, contact link and events', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const emails = ['Ann@Acme.test', 'bob@acme.test', 'ann@acme.test', 'CAROL@acme.test', 'bob@ACME.test'];
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        receive(t, source, { title: `Concurrent ${i}`, amount: i, contact: { email: emails[i % emails.length] } }),
      ),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    const answers = responses.map((r) => r.json());
    const dealIds = answers.map((a) => a.deal.id);
    expect(new Set(dealIds).size).toBe(20);

    // Three distinct emails in any letter case: three contacts, each answered "created" exactly once.
    const contactIds = new Set(answers.map((a) => a.contact.id));
    expect(contactIds.size).toBe(3);
    for (const id of contactIds) {
      expect(answers.filter((a) => a.contact.id === id && a.contact.created)).toHaveLength(1);
    }

    // Deals written by one transaction share its id (xmin): fewer transactions than receives means they were grouped.
    const { rows } = await sql<{ n: number }>`select count(distinct xmin::text)::int as n from deals where id = any(${dealIds}::int[])`.execute(t.db);
    expect(rows[0]!.n).toBeLessThan(20);

    for (const [i, dealId] of dealIds.entries()) {
      const deal = await t.call({ method: 'GET', url: `/service/${dealId}/view` });
      expect(deal.json().deal.title).toBe(`Concurrent ${i}`);
      expect(deal.json().deal.contacts).toHaveLength(1);
      expect(deal.json().deal.contacts[0]).toMatchObject({ contact_id: answers[i].contact.id, is_primary: true });
      const events = await t.db.selectFrom('event_outbox').select(['event', 'sequence']).where('deal_id', '=', dealId).orderBy('sequence').execute();
      expect(events).toEqual([
        { event: 'service.deal.created', sequence: 1 },
        { event: 'service.deal.contact_added', sequence: 2 },
      ]);
    }

    // A receive's events (created, then contact_added) are queued together: both ids are in one delivery job.
    const { rows: jobs } = await sql<{ deal_ids: number[] }>`
      select array_agg(distinct o.deal_id) as deal_ids, count(*)::int as n
      from graphile_worker._private_jobs j
      cross join json_array_elements_text(j.payload->'eventIds') as queued (id)
      join event_outbox o on o.id = queued.id::uuid
      group by j.id`.execute(t.db);
    const jobsPerDeal = new Map<number, number>();
    for (const job of jobs) for (const dealId of job.deal_ids) jobsPerDeal.set(dealId, (jobsPerDeal.get(dealId) ?? 0) + 1);
    expect(dealIds.map((id) => jobsPerDeal.get(id))).toEqual(Array(20).fill(1));
  });

  it('a receive that fails inside a shared transaction fails alone; the others are written', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const good = Array.from({ length: 8 }, (_, i) => receive(t, source, { title: `Good ${i}` }));
    // An unknown external_id without a title can only be refused once the transaction looks it up.
    const bad = receive(t, source, { external_id: 'never-seen', amount: 5 });
    const [badResponse, ...goodResponses] = await Promise.all([bad, ...good]);

    expect(badResponse!.statusCode).toBe(422);
    expect(badResponse!.json().errors[0].details).toHaveProperty('title');
    expect(goodResponses.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    const titles = await t.db.selectFrom('deals').select('title').where('source_id', '=', source.id).orderBy('title').execute();
    expect(titles.map((row) => row.title)).toEqual(Array.from({ length: 8 }, (_, i) => `Good ${i}`));

    const log = await t.call({ method: 'GET', url: `/service/settings/inbound-webhooks/${source.id}/log` });
    const outcomes = log.json().log.map((entry: { outcome: string; status: number }) => `${entry.outcome}:${entry.status}`);
    expect(outcomes.filter((o: string) => o === 'created:200')).toHaveLength(8);
    expect(outcomes).toContain('rejected:422');
  });

  it('two receives with one replay key in the same moment: one deal, the same answer twice', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const body = { title: 'Keyed' };
    const [first, second] = await Promise.all([
      receive(t, source, body, { 'idempotency-key': 'k-1' }),
      receive(t, source, body, { 'idempotency-key': 'k-1' }),
    ]);
    expect(first!.statusCode).toBe(200);
    expect(second!.statusCode).toBe(200);
    expect(second!.json()).toEqual(first!.json());
    expect([first!.headers['idempotent-replayed'], second!.headers['idempotent-replayed']].filter(Boolean)).toEqual(['true']);
    const deals = await t.db.selectFrom('deals').select('id').where('source_id', '=', source.id).execute();
    expect(deals).toHaveLength(1);
  });
  it('with a pool of one connection, concurrent receives are all written: a batch does not hold it while waiting for its lookups', async () => {
    // Lookups beside a transaction need a second connection; with one, the batch would wait for itself until the acquire timeout (503).
    const t = await setupApp({ config: { DB_POOL_SIZE: '1', DB_ACQUIRE_TIMEOUT_MS: '1000' } });
    const source = await createSource(t);
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) => receive(t, source, { title: `Small pool ${i}`, contact: { email: `pool-${i % 3}@acme.test` } })),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    const dealIds = responses.map((r) => r.json().deal.id);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from deals where id = any(${dealIds}::int[]) and title like 'Small pool %'`.execute(t.db);
    expect(rows[0]!.n).toBe(8);
  });
});
