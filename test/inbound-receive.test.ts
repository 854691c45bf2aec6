import { describe, expect, it } from 'vitest';
import { setupApp, type TestContext } from './helpers/app.js';
import { createContact, createPipeline, defaultPipeline } from './helpers/factories.js';
import { createSource, hmacHex, INBOUND, receive, signature } from './helpers/inbound.js';

const dealCount = async (t: TestContext) => (await t.db.selectFrom('deals').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
const eventsOf = (t: TestContext, dealId: number) =>
  t.db.selectFrom('event_outbox').select(['event', 'payload']).where('deal_id', '=', dealId).orderBy('sequence').execute();

describe('inbound receive: signature', () => {
  it('accepts the HMAC of the exact bytes (any hex case) and refuses everything else with 403, changing nothing', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const body = '{"title":"Signed deal","amount":10}';
    const url = `${INBOUND}/${source.id}/receive`;
    const send = (headers: Record<string, string>, payload = body) =>
      t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload });
    const digest = hmacHex(source.secret, body);

    const refused: [string, Record<string, string>, string?][] = [
      ['missing header', {}],
      ['empty header', { 'x-service-signature': '' }],
      ['no prefix', { 'x-service-signature': digest }],
      ['wrong prefix', { 'x-service-signature': `sha1=${digest}` }],
      ['wrong algorithm name', { 'x-service-signature': `sha512=${digest}` }],
      ['wrong secret', { 'x-service-signature': signature('f'.repeat(64), body) }],
      ['secret hex-decoded instead of used as text', { 'x-service-signature': `sha256=${hmacHex(Buffer.from(source.secret, 'hex') as unknown as string, body)}` }],
      ['truncated digest', { 'x-service-signature': `sha256=${digest.slice(0, 63)}` }],
      ['half digest', { 'x-service-signature': `sha256=${digest.slice(0, 32)}` }],
      ['non-hex digest', { 'x-service-signature': `sha256=${digest.slice(0, 63)}g` }],
      ['digest with extra bytes', { 'x-service-signature': `sha256=${digest}00` }],
      ['re-serialized body', { 'x-service-signature': signature(source.secret, JSON.stringify(JSON.parse(body), null, 2)) }],
      ['one byte of whitespace added', { 'x-service-signature': signature(source.secret, body) }, `${body} `],
      ['key order changed', { 'x-service-signature': signature(source.secret, '{"amount":10,"title":"Signed deal"}') }],
    ];
    for (const [label, headers, payload] of refused) {
      const res = await send(headers, payload);
      expect(res.statusCode, label).toBe(403);
      expect(res.json().errors[0].type, label).toBe('invalid_signature');
    }
    expect(await dealCount(t)).toBe(0);

    const upper = await send({ 'x-service-signature': `sha256=${digest.toUpperCase()}` });
    expect(upper.statusCode).toBe(200);
    const pretty = JSON.stringify({ title: 'Pretty' }, null, 2);
    const prettyOk = await send({ 'x-service-signature': signature(source.secret, pretty) }, pretty);
    expect(prettyOk.statusCode).toBe(200);
    expect(await dealCount(t)).toBe(2);
  });

  it('signs bytes, not text: non-ASCII bodies and any content type work when signed as sent', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const body = Buffer.from('{"title":"Café — Zürich ✓"}', 'utf8');
    const res = await receive(t, source, body, { 'content-type': 'text/plain; charset=utf-8' });
    expect(res.statusCode).toBe(200);
    const deal = await t.db.selectFrom('deals').select('title').where('id', '=', res.json().deal.id).executeTakeFirstOrThrow();
    expect(deal.title).toBe('Café — Zürich ✓');
    const latin1 = Buffer.from('{"title":"Café"}', 'latin1');
    const wrongBytes = await t.app.inject({
      method: 'POST',
      url: `${INBOUND}/${source.id}/receive`,
      headers: { 'content-type': 'application/json', 'x-service-signature': signature(source.secret, '{"title":"Café"}') },
      payload: latin1,
    });
    expect(wrongBytes.statusCode).toBe(403);
  });
});

describe('inbound receive: body validation (422, nothing written)', () => {
  it('refuses bodies that are not a JSON object', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    for (const body of ['[]', '[{"title":"x"}]', '"title"', '42', 'null', 'true', '{', '{"title":"x",}', '', 'title=x']) {
      const res = await receive(t, source, body);
      expect(res.statusCode, body).toBe(422);
      expect(res.json().errors[0].type).toBe('validation_failed');
      expect(Object.keys(res.json().errors[0].details), body).toEqual(['body']);
    }
    expect(await dealCount(t)).toBe(0);
  });

  it('names each invalid field', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const cases: [object, string][] = [
      [{}, 'title'],
      [{ amount: 5 }, 'title'],
      [{ title: '   ' }, 'title'],
      [{ title: 7 }, 'title'],
      [{ title: 'x'.repeat(256) }, 'title'],
      [{ title: 'T', amount: '100' }, 'amount'],
      [{ title: 'T', amount: -1 }, 'amount'],
      [{ title: 'T', amount: 1.234 }, 'amount'],
      [{ title: 'T', amount: 1e20 }, 'amount'],
      [{ title: 'T', close_date: '2026-02-30' }, 'close_date'],
      [{ title: 'T', close_date: '2026/12/31' }, 'close_date'],
      [{ title: 'T', close_date: 20261231 }, 'close_date'],
      [{ title: 'T', contact: { first_name: 'Ann' } }, 'contact[email]'],
      [{ title: 'T', contact: { email: 'not-an-email' } }, 'contact[email]'],
      [{ title: 'T', contact: { email: 'a@b.co', company: 5 } }, 'contact[company]'],
      [{ title: 'T', contact: 'a@b.co' }, 'contact'],
      [{ title: 'T', custom_fields: ['a'] }, 'custom_fields'],
      [{ title: 'T', custom_fields: 'a=b' }, 'custom_fields'],
      [{ title: 'T', custom_fields: { a: { b: { c: { d: { e: { f: { g: { h: { i: { j: 1 } } } } } } } } } } }, 'custom_fields[a]'],
      [{ title: 'T', external_id: '' }, 'external_id'],
      [{ title: 'T', external_id: { id: 1 } }, 'external_id'],
    ];
    for (const [body, field] of cases) {
      const res = await receive(t, source, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(Object.keys(res.json().errors[0].details), JSON.stringify(body)).toContain(field);
    }
    expect(await dealCount(t)).toBe(0);
    const contacts = await t.db.selectFrom('contacts').select('id').execute();
    expect(contacts).toEqual([]);
  });

  it('refuses a deeply nested body without a server error', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const deep = `{"title":"T","custom_fields":{"a":${'['.repeat(120_000)}${']'.repeat(120_000)}}}`;
    const res = await receive(t, source, deep);
    expect(res.statusCode).toBe(422);
  });
});

describe('inbound receive: mapping', () => {
  it('creates the deal in the source pipeline first stage with contact, custom fields and events', async () => {
    const t = await setupApp();
    const pipeline = await createPipeline(t.db, { name: 'Partners' });
    const source = await createSource(t, { name: 'Partner portal', pipeline: pipeline.id });
    const res = await receive(t, source, {
      title: 'Acme renewal',
      amount: 1500.5,
      close_date: '2026-12-31',
      contact: { email: 'Buyer@Acme.example', first_name: 'Bea', last_name: 'Buyer', company: 'Acme' },
      custom_fields: { plan: 'gold', seats: 25, tags: ['a', 'b'] },
      extra_field_ignored: true,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({ success: true, created: true, deal: { id: expect.any(Number) }, contact: { id: expect.any(Number), created: true } });

    const deal = await t.db.selectFrom('deals').selectAll().where('id', '=', body.deal.id).executeTakeFirstOrThrow();
    expect(deal).toMatchObject({
      title: 'Acme renewal',
      amount: '1500.50',
      close_date: '2026-12-31',
      pipeline_id: pipeline.id,
      stage_id: pipeline.stages[0]!.id,
      status: 'open',
      source_id: source.id,
      external_id: null,
      custom_fields: { plan: 'gold', seats: 25, tags: ['a', 'b'] },
    });
    const contact = await t.db.selectFrom('contacts').selectAll().where('id', '=', body.contact.id).executeTakeFirstOrThrow();
    expect(contact).toMatchObject({ email: 'Buyer@Acme.example', first_name: 'Bea', last_name: 'Buyer', company: 'Acme' });
    const members = await t.db.selectFrom('deal_contacts').selectAll().where('deal_id', '=', deal.id).execute();
    expect(members).toMatchObject([{ contact_id: contact.id, is_primary: true }]);

    const events = await eventsOf(t, deal.id);
    expect(events.map((e) => e.event)).toEqual(['service.deal.created', 'service.deal.contact_added']);
    for (const event of events) {
      expect(event.payload.changed_by).toEqual({ id: null, name: 'Partner portal' });
      expect(event.payload.source).toEqual({ id: source.id, name: 'Partner portal' });
      // A deal from a sender has no owner: the snapshot says so with null, as the spec's deal object does.
      expect(event.payload.deal).toEqual({
        id: deal.id,
        title: 'Acme renewal',
        amount: 1500.5,
        currency: 'USD',
        status: 'open',
        stage: { id: pipeline.stages[0]!.id, name: pipeline.stages[0]!.name, type: 'open' },
        pipeline: { id: pipeline.id, name: 'Partners' },
        owner: null,
        closeDate: '2026-12-31',
      });
    }
    expect(events[1]!.payload.contact).toEqual({
      id: contact.id,
      email: 'Buyer@Acme.example',
      first_name: 'Bea',
      last_name: 'Buyer',
      company: 'Acme',
      role: null,
      is_primary: true,
    });
  });

  it('uses the default pipeline of a source created without one, and no contact when none is sent', async () => {
    const t = await setupApp();
    const sales = await defaultPipeline(t.db);
    const source = await createSource(t);
    const res = await receive(t, source, { title: 'Plain' });
    expect(res.json()).toEqual({ success: true, created: true, deal: { id: expect.any(Number) }, contact: null });
    const deal = await t.db.selectFrom('deals').selectAll().where('id', '=', res.json().deal.id).executeTakeFirstOrThrow();
    expect(deal).toMatchObject({ pipeline_id: sales.id, stage_id: sales.stages[0]!.id, amount: '0.00', close_date: null, custom_fields: {} });
  });

  it('reuses an existing contact found by email in any letter case, without changing it', async () => {
    const t = await setupApp();
    const existing = await createContact(t.db, { email: 'Ann.Lee@Example.COM', first_name: 'Ann' });
    const source = await createSource(t);
    for (const email of ['ann.lee@example.com', 'ANN.LEE@EXAMPLE.COM', '  Ann.Lee@example.com ']) {
      const res = await receive(t, source, { title: `Deal for ${email}`, contact: { email, first_name: 'Someone else' } });
      expect(res.statusCode).toBe(200);
      expect(res.json().contact).toEqual({ id: existing.id, created: false });
    }
    const contacts = await t.db.selectFrom('contacts').selectAll().execute();
    expect(contacts).toHaveLength(1);
    expect(contacts[0]).toMatchObject({ email: 'Ann.Lee@Example.COM', first_name: 'Ann' });
    const links = await t.db.selectFrom('deal_contacts').select('contact_id').execute();
    expect(links).toEqual([{ contact_id: existing.id }, { contact_id: existing.id }, { contact_id: existing.id }]);
  });

  it('concurrent first receives bringing one new email make one contact, and every deal is linked to it', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => receive(t, source, { title: `Race ${i}`, contact: { email: i % 2 ? 'new@race.example' : 'NEW@race.example' } })),
    );
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    const contacts = await t.db.selectFrom('contacts').select('id').execute();
    expect(contacts).toHaveLength(1);
    expect(results.filter((r) => r.json().contact.created)).toHaveLength(1);
    for (const r of results) expect(r.json().contact.id).toBe(contacts[0]!.id);
    const links = await t.db.selectFrom('deal_contacts').select(['deal_id', 'contact_id', 'is_primary']).execute();
    expect(links).toHaveLength(6);
    expect(new Set(links.map((l) => l.deal_id))).toEqual(new Set(results.map((r) => r.json().deal.id)));
    expect(links.every((l) => l.contact_id === contacts[0]!.id && l.is_primary)).toBe(true);
  });

  it('external_id: a repeat updates that source\'s deal (merging custom fields); another source gets its own deal', async () => {
    const t = await setupApp();
    const source = await createSource(t, { name: 'CRM' });
    const other = await createSource(t, { name: 'Other CRM' });
    const first = await receive(t, source, { external_id: 'crm-1', title: 'First', amount: 10, custom_fields: { a: 1 } });
    expect(first.json().created).toBe(true);
    const dealId = first.json().deal.id;

    const contactFirst = await createContact(t.db, { email: 'first@crm.example' });
    const second = await receive(t, source, {
      external_id: 'crm-1',
      amount: 20,
      close_date: '2027-01-15',
      custom_fields: { b: 2 },
      contact: { email: 'first@crm.example' },
    });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual({ success: true, created: false, deal: { id: dealId }, contact: { id: contactFirst.id, created: false } });
    const deal = await t.db.selectFrom('deals').selectAll().where('id', '=', dealId).executeTakeFirstOrThrow();
    expect(deal).toMatchObject({ title: 'First', amount: '20.00', close_date: '2027-01-15', custom_fields: { a: 1, b: 2 }, external_id: 'crm-1' });
    const events = (await eventsOf(t, dealId)).map((e) => e.event);
    expect(events).toEqual(['service.deal.created', 'service.deal.updated', 'service.deal.contact_added']);
    const updated = (await eventsOf(t, dealId))[1]!.payload;
    expect(updated.changes).toMatchObject({ amount: { from: 10, to: 20 }, closeDate: { from: null, to: '2027-01-15' } });
    expect(updated.changed_by).toEqual({ id: null, name: 'CRM' });

    const numeric = await receive(t, source, { external_id: 77, title: 'Numeric' });
    const numericAgain = await receive(t, source, { external_id: '77', title: 'Numeric renamed' });
    expect(numericAgain.json()).toMatchObject({ created: false, deal: { id: numeric.json().deal.id } });

    const elsewhere = await receive(t, other, { external_id: 'crm-1', title: 'Other system' });
    expect(elsewhere.json().created).toBe(true);
    expect(elsewhere.json().deal.id).not.toBe(dealId);

    const missingTitle = await receive(t, source, { external_id: 'crm-new', amount: 5 });
    expect(missingTitle.statusCode).toBe(422);
    expect(missingTitle.json().errors[0].details).toHaveProperty('title');
    expect(await dealCount(t)).toBe(3);
  });

  it('numbers a deal\'s events 1, 2, 3 ... from its creation with a contact through later updates and moves', async () => {
    const t = await setupApp();
    const source = await createSource(t, { name: 'CRM' });
    const first = await receive(t, source, { external_id: 'seq-1', title: 'Sequenced', contact: { email: 'seq@crm.example' } });
    const dealId = first.json().deal.id;
    await receive(t, source, { external_id: 'seq-1', amount: 42 });
    const pipeline = await defaultPipeline(t.db);
    await t.call({ method: 'POST', url: `/service/${dealId}/stage`, payload: { stage_id: pipeline.stages[1]!.id } });
    await receive(t, source, { external_id: 'seq-1', title: 'Sequenced again' });

    const events = await t.db.selectFrom('event_outbox').select(['event', 'sequence', 'payload']).where('deal_id', '=', dealId).orderBy('sequence').execute();
    expect(events.map((e) => [e.event, e.sequence, e.payload.sequence])).toEqual([
      ['service.deal.created', 1, 1],
      ['service.deal.contact_added', 2, 2],
      ['service.deal.updated', 3, 3],
      ['deal.stage_changed', 4, 4],
      ['service.deal.updated', 5, 5],
    ]);
    const deal = await t.db.selectFrom('deals').select('event_sequence').where('id', '=', dealId).executeTakeFirstOrThrow();
    expect(deal.event_sequence).toBe(5);
  });

  it('concurrent first receives of one external_id make one deal, the rest update it', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => receive(t, source, { external_id: 'same', title: `Version ${i}` })));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(results.filter((r) => r.json().created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.json().deal.id)).size).toBe(1);
    expect(await dealCount(t)).toBe(1);
  });
});

describe('inbound receive: replay safety', () => {
  it('a repeated Idempotency-Key or webhook-id gets the first answer and changes nothing', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    for (const header of ['idempotency-key', 'webhook-id']) {
      const first = await receive(t, source, { title: `First via ${header}`, contact: { email: `${header}@replay.example` } }, { [header]: `key-${header}` });
      expect(first.statusCode).toBe(200);
      const dealsBefore = await dealCount(t);
      const eventsBefore = await t.db.selectFrom('event_outbox').select('id').execute();
      const again = await receive(t, source, { title: 'A different body', amount: 99 }, { [header]: `key-${header}` });
      expect(again.statusCode).toBe(200);
      expect(again.body).toBe(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await dealCount(t)).toBe(dealsBefore);
      expect(await t.db.selectFrom('event_outbox').select('id').execute()).toHaveLength(eventsBefore.length);
      const deal = await t.db.selectFrom('deals').select(['title', 'amount']).where('id', '=', first.json().deal.id).executeTakeFirstOrThrow();
      expect(deal).toEqual({ title: `First via ${header}`, amount: '0.00' });
    }
    // Keys belong to their source.
    const other = await createSource(t);
    const elsewhere = await receive(t, other, { title: 'Other source' }, { 'idempotency-key': 'key-idempotency-key' });
    expect(elsewhere.json().created).toBe(true);
    expect(elsewhere.headers['idempotent-replayed']).toBeUndefined();
  });

  it('without a key, a byte-identical signed body within 24 h gets the first answer; a changed byte or an old body is new', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const body = '{"title":"Same bytes","contact":{"email":"same@bytes.example"}}';
    const first = await receive(t, source, body);
    const second = await receive(t, source, body);
    expect(second.body).toBe(first.body);
    expect(second.json().contact.created).toBe(true); // the first answer, as it was
    expect(await dealCount(t)).toBe(1);

    const spaced = await receive(t, source, `${body}\n`);
    expect(spaced.json().deal.id).not.toBe(first.json().deal.id);
    expect(spaced.json().contact).toEqual({ id: first.json().contact.id, created: false });
    expect(await dealCount(t)).toBe(2);

    // Distinct keys mean distinct deliveries even with identical bodies.
    const keyed = await receive(t, source, body, { 'idempotency-key': 'fresh' });
    expect(keyed.json().deal.id).not.toBe(first.json().deal.id);

    await t.db.updateTable('inbound_idempotency').set({ created_at: new Date(Date.now() - 25 * 3600_000) }).where('source_id', '=', source.id).execute();
    const later = await receive(t, source, body);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.json().created).toBe(true);
    expect(await dealCount(t)).toBe(4);
    expect((await receive(t, source, body)).body).toBe(later.body);
  });

  it('two identical requests at once make one deal and get the same answer', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const body = '{"title":"Twice at once","contact":{"email":"twice@once.example"}}';
    const results = await Promise.all(Array.from({ length: 4 }, () => receive(t, source, body)));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    expect(new Set(results.map((r) => r.body)).size).toBe(1);
    expect(await dealCount(t)).toBe(1);
    const keyed = await Promise.all(Array.from({ length: 4 }, (_, i) => receive(t, source, { title: `Keyed ${i}` }, { 'idempotency-key': 'one' })));
    expect(new Set(keyed.map((r) => r.body)).size).toBe(1);
    expect(await dealCount(t)).toBe(2);
    expect(await t.db.selectFrom('event_outbox').select('id').where('event', '=', 'service.deal.created').execute()).toHaveLength(2);
  });

  it('refuses a malformed replay key with 422', async () => {
    const t = await setupApp();
    const source = await createSource(t);
    const res = await receive(t, source, { title: 'T' }, { 'idempotency-key': 'k'.repeat(256) });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].details).toHaveProperty(['idempotency-key']);
  });
});
