import { createHash } from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import type { Config } from '../src/config.js';
import { seedPipelines } from '../src/domain/pipelines/seed.js';
import { startWorker } from '../src/events/worker.js';
import { createMauticAuth } from '../src/host/mautic/auth.js';
import { createMauticClient } from '../src/host/mautic/client.js';
import { createMauticHost } from '../src/host/mautic/index.js';
import { upsertContacts, upsertUsers } from '../src/host/local-copy.js';
import type { HostPort } from '../src/host/port.js';
import { basic, createTestDatabase, testConfig } from './helpers/app.js';
import { INBOUND, signature } from './helpers/inbound.js';
import { ADMIN_ROLE, contactDeleted, contactsMerged, doubleUser, signedWebhook, startMauticDouble, type MauticDouble } from './mautic-double/index.js';

const SECRET = 'mautic-webhook-secret-for-tests';
const MIA = { username: 'mia', password: 'mia-password' };
const SAM = { username: 'sam', password: 'sam-password' };
const IVY = { username: 'ivy', password: 'ivy-password' };

let mautic: MauticDouble;
let app: FastifyInstance;
let host: HostPort;
let config: Config;
let dbUrl: string;
let db: Awaited<ReturnType<typeof createTestDatabase>>['database']['db'];

beforeAll(async () => {
  mautic = await startMauticDouble({
    users: [
      doubleUser(5, 'mia', MIA.password, ADMIN_ROLE, 'Mia Admin'),
      doubleUser(6, 'sam', SAM.password, { id: 2, name: 'Sales team', isAdmin: false }, 'Sam Seller'),
      doubleUser(7, 'ivy', IVY.password, { id: 3, name: 'Interns', isAdmin: false }, 'Ivy Intern'),
    ],
    contacts: [
      { id: 10, email: 'ann@acme.example.org', firstname: 'Ann', lastname: 'Other', company: null },
      { id: 11, email: 'bob@globex.example', firstname: 'Bob', lastname: 'Stone', company: 'Globex' },
      { id: 12, email: 'cy@globex.example', firstname: 'Cy', lastname: 'Stone', company: 'Globex' },
      { id: 13, email: 'dee@initech.example', firstname: 'Dee', lastname: null, company: 'Initech' },
    ],
  });
  const test = await createTestDatabase();
  db = test.database.db;
  dbUrl = test.url;
  await seedPipelines(db);
  await db
    .insertInto('roles')
    .values({ name: 'Seller', is_admin: false, permissions: ['service:deals:viewown', 'service:deals:create', 'service:deals:editown', 'service:pipelines:view'] })
    .execute();
  config = testConfig({
    HOST_PLATFORM: 'mautic',
    MAUTIC_URL: mautic.url,
    MAUTIC_USERNAME: MIA.username,
    MAUTIC_PASSWORD: MIA.password,
    MAUTIC_ROLE_MAP: 'Sales team=Seller',
    MAUTIC_WEBHOOK_SECRET: SECRET,
    HOST_TIMEOUT_MS: '300',
  });
  host = createMauticHost({ db, config, logger: pino({ level: 'silent' }) });
  app = await buildApp({ config, db, logger: pino({ level: 'silent' }), host });
  await app.ready();
  return async () => {
    await app.close();
    await host.close?.();
    await mautic.close();
    await test.drop();
  };
});

const call = (options: InjectOptions, as: { username: string; password: string } = MIA) =>
  app.inject({ ...options, headers: { authorization: basic(as), ...(options.headers as Record<string, string>) } });
const selfCalls = () => mautic.requests.get('GET /api/users/self') ?? 0;

async function newDeal(title: string, as = MIA): Promise<number> {
  const res = await call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title } } }, as);
  expect(res.statusCode).toBe(200);
  return res.json().deal.id;
}

describe('Mautic host: who is calling', () => {
  it('a Mautic administrator gets every permission and is copied into the local users table', async () => {
    const res = await call({ method: 'GET', url: '/service/pipelines' });
    expect(res.statusCode).toBe(200);
    expect((await call({ method: 'GET', url: '/host/webhooks' })).statusCode).toBe(200);
    const user = await db.selectFrom('users').select(['id', 'username', 'name', 'password_hash']).where('id', '=', 5).executeTakeFirstOrThrow();
    expect(user).toEqual({ id: 5, username: 'mia', name: 'Mia Admin', password_hash: null });
  });

  it('a mapped Mautic role gets that service role\'s permissions and nothing more', async () => {
    expect((await call({ method: 'GET', url: '/service/pipelines' }, SAM)).statusCode).toBe(200);
    expect((await call({ method: 'GET', url: '/host/webhooks' }, SAM)).statusCode).toBe(403);
  });

  it('an unmapped Mautic role with no MAUTIC_DEFAULT_ROLE is refused with 403, not guessed', async () => {
    const res = await call({ method: 'GET', url: '/service/pipelines' }, IVY);
    expect(res.statusCode).toBe(403);
  });

  it('wrong credentials are 401', async () => {
    const res = await call({ method: 'GET', url: '/service/pipelines' }, { username: 'mia', password: 'wrong' });
    expect(res.statusCode).toBe(401);
  });

  it('a second request within the cache lifetime does not ask Mautic again', async () => {
    const before = selfCalls();
    await call({ method: 'GET', url: '/service/pipelines' }, SAM);
    await call({ method: 'GET', url: '/service/pipelines' }, SAM);
    expect(selfCalls()).toBe(before);
  });

  it('the cache is keyed by a SHA-256 of the credentials, never the credentials', async () => {
    const client = createMauticClient({ baseUrl: mautic.url, timeoutMs: 1000, credentials: MIA, logger: pino({ level: 'silent' }) });
    const auth = createMauticAuth({ db, client, config, logger: pino({ level: 'silent' }) });
    expect(await auth.authenticateBasic(SAM.username, SAM.password)).toMatchObject({ id: 6, isAdmin: false });
    const keys = auth.cacheKeys();
    expect(keys).toEqual([createHash('sha256').update(basic(SAM)).digest('hex')]);
    expect(keys.join()).not.toContain(SAM.password);
  });
});

describe('Mautic host: the sales pages', () => {
  it('logs a Mautic user in to the pages with the rights the host granted, and keeps them for the session', async () => {
    const login = await app.inject({
      method: 'POST',
      url: '/service/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ username: SAM.username, password: SAM.password }).toString(),
    });
    expect(login.statusCode).toBe(303);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const board = await app.inject({ method: 'GET', url: '/service/board', headers: { cookie, accept: 'text/html' } });
    expect(board.statusCode).toBe(200);
    expect(board.body).toContain('Sam Seller');
    // Sam has no local role: the session holds what Mautic's role mapping granted at login.
    const user = await db.selectFrom('users').select('role_id').where('id', '=', 6).executeTakeFirstOrThrow();
    expect(user.role_id).toBeNull();
    const table = await app.inject({ method: 'GET', url: '/service/deals', headers: { cookie, accept: 'text/html' } });
    expect(table.statusCode).toBe(200);
  });
});

describe('Mautic host: contacts', () => {
  it('find-or-create: creates (201 → created) despite the email: prefix trap, then finds the same contact', async () => {
    const first = await host.contacts.findOrCreateByEmail([{ email: 'ann@acme.example', first_name: 'Ann' }]);
    const created = first.get('ann@acme.example')!;
    expect(created.created).toBe(true);
    expect(created.contact.id).not.toBe(10);
    expect(mautic.state.contacts.get(created.contact.id)?.email).toBe('ann@acme.example');
    const again = await host.contacts.findOrCreateByEmail([{ email: 'ANN@acme.example' }]);
    expect(again.get('ann@acme.example')).toEqual({ contact: created.contact, created: false });
    const copy = await db.selectFrom('contacts').select(['email', 'first_name']).where('id', '=', created.contact.id).executeTakeFirst();
    expect(copy).toEqual({ email: 'ann@acme.example', first_name: 'Ann' });
  });

  it('find-or-create of one new email by several callers at once: none fails, all get one contact, one says created', async () => {
    // Two receives' batches bringing the same new email: both miss it, both ask Mautic (201, then 200: it creates or
    // updates by email), and both write the contact into the local copy at the same moment.
    for (let round = 0; round < 10; round++) {
      const email = `race-${round}@acme.example`;
      const answers = await Promise.all(Array.from({ length: 6 }, () => host.contacts.findOrCreateByEmail([{ email }])));
      const got = answers.map((answer) => answer.get(email)!);
      expect(new Set(got.map((g) => g.contact.id)).size).toBe(1);
      expect(got.filter((g) => g.created)).toHaveLength(1);
      const copies = await db.selectFrom('contacts').select('id').where('email', '=', email).where('deleted_at', 'is', null).execute();
      expect(copies).toEqual([{ id: got[0]!.contact.id }]);
    }
  });

  it('the local copy takes one contact written by several callers at the same moment, without a unique violation', async () => {
    for (let round = 0; round < 40; round++) {
      const contact = { id: 9000 + round, email: `copy-race-${round}@acme.example`, first_name: 'Copy', last_name: null, company: null };
      const settled = await Promise.allSettled(Array.from({ length: 8 }, () => upsertContacts(db, [contact])));
      expect(settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason))).toEqual([]);
    }
    const copies = await db.selectFrom('contacts').select('id').where('email', 'like', 'copy-race-%').where('deleted_at', 'is', null).execute();
    expect(copies).toHaveLength(40);
  });

  it('the local copy takes one user written by several first requests at once; a username held by another id still conflicts', async () => {
    for (let round = 0; round < 40; round++) {
      const user = { id: 9000 + round, username: `Race${round}`, name: `Race ${round}`, email: null };
      const settled = await Promise.allSettled(Array.from({ length: 8 }, () => upsertUsers(db, [user])));
      expect(settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason))).toEqual([]);
    }
    expect(await db.selectFrom('users').select('id').where('username', 'like', 'Race%').execute()).toHaveLength(40);
    await upsertUsers(db, [{ id: 9000, username: 'Race0', name: 'Renamed', email: 'race0@example.test' }]);
    expect(await db.selectFrom('users').select(['name', 'email']).where('id', '=', 9000).executeTakeFirst()).toEqual({ name: 'Renamed', email: 'race0@example.test' });
    await expect(upsertUsers(db, [{ id: 9999, username: 'RACE0', name: 'Someone else', email: null }])).rejects.toMatchObject({ code: '23505' });
  });

  it('search answers Mautic contacts by name', async () => {
    const found = await host.contacts.search({ search: 'Stone', limit: 10 });
    expect(found.map((c) => c.id).sort()).toEqual([11, 12]);
  });

  it('a committee member by a Mautic id never seen before fills the local copy', async () => {
    expect(await db.selectFrom('contacts').select('id').where('id', '=', 13).executeTakeFirst()).toBeUndefined();
    const id = await newDeal('Initech renewal');
    const res = await call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: 13, role: 'Champion' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().contact).toMatchObject({ contact_id: 13, deleted: false, contact: { email: 'dee@initech.example', company: 'Initech' } });
    const unknown = await call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: 999 } });
    expect(unknown.statusCode).toBe(422);
  });
});

describe('Mautic host: contact webhooks', () => {
  let dealId: number;
  beforeAll(async () => {
    dealId = await newDeal('Globex expansion');
    for (const contactId of [11, 12]) {
      expect((await call({ method: 'POST', url: `/service/${dealId}/contacts`, payload: { contact_id: contactId } })).statusCode).toBe(200);
    }
  });
  const view = async () => (await call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal.contacts as any[];
  const post = (signed: { body: string; headers: Record<string, string> }) =>
    app.inject({ method: 'POST', url: '/service/host/mautic/webhook', payload: signed.body, headers: signed.headers });

  it('a bad signature is refused and changes nothing', async () => {
    const signed = signedWebhook('not-the-secret', contactDeleted(mautic.state.contacts.get(11)!));
    const res = await post(signed);
    expect(res.statusCode).toBe(403);
    expect((await view()).find((m) => m.contact_id === 11).deleted).toBe(false);
  });

  it('a contact deleted in Mautic shows as deleted on the deal', async () => {
    const contact = mautic.state.contacts.get(11)!;
    mautic.state.contacts.delete(11);
    const res = await post(signedWebhook(SECRET, contactDeleted(contact)));
    expect(res.statusCode).toBe(200);
    const member = (await view()).find((m) => m.contact_id === 11);
    expect(member).toMatchObject({ deleted: true, contact: { email: 'bob@globex.example' } });
  });

  it('a merge (update of the winner, delete of the loser) updates the winner and marks the loser deleted', async () => {
    const winner = mautic.state.contacts.get(13)!;
    const loser = mautic.state.contacts.get(12)!;
    winner.company = 'Initech Group';
    for (const payload of contactsMerged(winner, loser)) expect((await post(signedWebhook(SECRET, payload))).statusCode).toBe(200);
    expect((await view()).find((m) => m.contact_id === 12).deleted).toBe(true);
    const copy = await db.selectFrom('contacts').select('company').where('id', '=', 13).executeTakeFirstOrThrow();
    expect(copy.company).toBe('Initech Group');
  });
});

describe('Mautic host: when Mautic is down, slow or failing', () => {
  let dealId: number;
  beforeAll(async () => {
    dealId = await newDeal('Umbrella pilot');
    expect((await call({ method: 'POST', url: `/service/${dealId}/contacts`, payload: { contact_id: 10 } })).statusCode).toBe(200);
  });

  for (const [mode, delay] of [['down', 0], ['slow', 1000], ['error500', 0]] as const) {
    it(`${mode}: reads answer from the copy, a write needing Mautic is 503 with Retry-After and the error body`, async () => {
      await mautic.setMode(mode, delay);
      try {
        // The caller is already known (cached): reads need nothing from Mautic.
        const read = await call({ method: 'GET', url: `/service/${dealId}/view` });
        expect(read.statusCode).toBe(200);
        expect(read.json().deal.contacts.map((m: any) => m.contact_id)).toEqual([10]);
        const added = mautic.addContact({ email: `new-${mode}@example.test` });
        const write = await call({ method: 'POST', url: `/service/${dealId}/contacts`, payload: { contact_id: added.id } });
        expect(write.statusCode).toBe(503);
        expect(Number(write.headers['retry-after'])).toBeGreaterThan(0);
        expect(write.json().errors[0]).toMatchObject({ code: 503 });
        await expect(host.contacts.findOrCreateByEmail([{ email: 'zed@example.test' }])).rejects.toMatchObject({ statusCode: 503 });
      } finally {
        await mautic.setMode('up');
      }
    });
  }
});

describe('Mautic host: an inbound receive while Mautic is down', () => {
  it('is kept (202 queued) and becomes a deal with its contact once Mautic is back', { timeout: 20_000 }, async () => {
    const created = await call({ method: 'POST', url: `${INBOUND}/new`, payload: { source: { name: 'Web form' } } });
    expect(created.statusCode).toBe(200);
    const source = created.json().source as { id: string; secret: string };
    const body = JSON.stringify({ title: 'Queued while down', amount: 1200, contact: { email: 'queued@example.test', first_name: 'Quinn' } });
    const send = () =>
      app.inject({
        method: 'POST',
        url: `${INBOUND}/${source.id}/receive`,
        headers: { 'content-type': 'application/json', 'x-service-signature': signature(source.secret, body) },
        payload: body,
      });
    const dealsNamed = () => db.selectFrom('deals').select('id').where('title', '=', 'Queued while down').execute();

    await mautic.setMode('down');
    const worker = await startWorker({
      databaseUrl: dbUrl,
      config: { ...config, WORKER_CONCURRENCY: 2 },
      logger: pino({ level: 'silent' }),
      pollIntervalMs: 50,
      inbound: { contacts: host.contacts, currency: config.DEFAULT_CURRENCY },
    });
    try {
      const res = await send();
      expect(res.statusCode).toBe(202);
      expect(res.json()).toEqual({ success: true, queued: true });
      // The worker's first try meets Mautic still down and fails; graphile-worker retries it later.
      await new Promise((done) => setTimeout(done, 500));
      expect(await dealsNamed()).toEqual([]);
      await mautic.setMode('up');
      const deadline = Date.now() + 15_000;
      while ((await dealsNamed()).length === 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
      const [deal] = await dealsNamed();
      expect(deal).toBeDefined();
      const contact = [...mautic.state.contacts.values()].find((c) => c.email === 'queued@example.test');
      expect(contact).toBeDefined();
      const members = await db.selectFrom('deal_contacts').select('contact_id').where('deal_id', '=', deal!.id).execute();
      expect(members).toEqual([{ contact_id: contact!.id }]);
      // The sender resending the same bytes gets the stored answer, not a second deal.
      const again = await send();
      expect(again.statusCode).toBe(200);
      expect(again.json().deal.id).toBe(deal!.id);
    } finally {
      await mautic.setMode('up');
      await worker.stop();
    }
  });
});
