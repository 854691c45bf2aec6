import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap } from '../src/host/builtin/index.js';
import { upsertContacts, upsertUsers } from '../src/host/local-copy.js';
import type { ContactRow, HostPort } from '../src/host/port.js';
import type { Actor } from '../src/host/permissions.js';
import { dealPipeline } from '../src/plugin.js';
import { ADMIN, createTestDatabase, testConfig } from './helpers/app.js';

/**
 * A Node host of its own mounts the service under /deals with a host adapter
 * written here: its callers carry the host's bearer tokens, its contacts live
 * in the host's own directory (a map), and the service keeps its local copy.
 */
const HOST_USER = { id: 700, username: 'hostie', name: 'Host Admin', email: 'admin@host.example' };
const directory = new Map<number, ContactRow>([[4200, { id: 4200, email: 'cleo@client.example', first_name: 'Cleo', last_name: 'Client', company: 'Client Co' }]]);

function testHost(db: Parameters<typeof upsertUsers>[0]): HostPort {
  const actor: Actor = { id: HOST_USER.id, name: HOST_USER.name, username: HOST_USER.username, roleId: 0, isAdmin: true, permissions: new Set() };
  return {
    name: 'test-host',
    managesUsers: false,
    dispatch: { mode: 'builtin' },
    auth: {
      async authenticateBasic() {
        return null;
      },
      async authenticateBearer(token) {
        if (token !== 'host-token') return null;
        await upsertUsers(db, [HOST_USER]);
        return actor;
      },
      forget() {},
    },
    users: {
      ensure: async (ids) => upsertUsers(db, ids.includes(HOST_USER.id) ? [HOST_USER] : []),
      search: async () => [HOST_USER],
    },
    contacts: {
      ensure: async (ids) => upsertContacts(db, ids.flatMap((id) => (directory.has(id) ? [directory.get(id)!] : []))),
      search: async ({ search }) => [...directory.values()].filter((c) => c.email.includes(search)),
      async findOrCreateByEmail(wanted) {
        const found = new Map<string, { contact: ContactRow; created: boolean }>();
        for (const { email } of wanted) {
          const contact = [...directory.values()].find((c) => c.email.toLowerCase() === email.toLowerCase());
          if (contact) found.set(email.toLowerCase(), { contact, created: false });
        }
        await upsertContacts(db, [...found.values()].map((f) => f.contact));
        return found;
      },
    },
    refresh() {},
  };
}

let host: FastifyInstance;
let drop: () => Promise<void>;
beforeAll(async () => {
  const test = await createTestDatabase();
  drop = test.drop;
  await bootstrap(test.database.db, ADMIN); // the default Sales pipeline
  host = Fastify({ loggerInstance: pino({ level: 'silent' }) as FastifyBaseLogger });
  host.get('/', async () => ({ app: 'the host' }));
  await host.register(dealPipeline, { prefix: '/deals', db: test.database.db, host: testHost(test.database.db), config: testConfig() });
  await host.ready();
});
afterAll(async () => {
  await host.close();
  await drop();
});

const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
  host.inject({ method, url, payload, headers: { authorization: 'Bearer host-token' } });

describe('the service mounted as a plugin under /deals', () => {
  it('runs a deal from creation to won through the host app, with the host adapter', async () => {
    const created = await call('POST', '/deals/service/deals/new', { deal: { title: 'Mounted deal', amount: 1200 } });
    expect(created.statusCode).toBe(200);
    const deal = created.json().deal;
    expect(created.headers.location).toBe(`http://service.test/deals/service/${deal.id}/view`);
    expect(deal.createdBy).toEqual({ id: HOST_USER.id, name: HOST_USER.name });

    const member = await call('POST', `/deals/service/${deal.id}/contacts`, { contact_id: 4200, role: 'Champion', is_primary: true });
    expect(member.statusCode).toBe(200);
    expect(member.json().contact).toMatchObject({ contact_id: 4200, is_primary: true, contact: { email: 'cleo@client.example' } });

    const stages = (await call('GET', '/deals/service/pipelines')).json().pipelines[0].stages as { id: number; type: string }[];
    const won = stages.find((stage) => stage.type === 'won')!;
    const moved = await call('POST', `/deals/service/${deal.id}/stage`, { stage_id: won.id });
    expect(moved.statusCode).toBe(200);
    expect(moved.json().deal).toMatchObject({ status: 'won', stage: { id: won.id } });

    const view = (await call('GET', `/deals/service/${deal.id}/view`)).json().deal;
    expect(view.contacts.map((c: { contact_id: number }) => c.contact_id)).toEqual([4200]);
  });

  it('keeps its guard, error body and documents inside its prefix, and leaves the host alone', async () => {
    const unauthenticated = await host.inject({ method: 'GET', url: '/deals/service/pipelines' });
    expect(unauthenticated.statusCode).toBe(401);
    expect(unauthenticated.json().errors[0]).toMatchObject({ code: 401 });
    expect((await host.inject({ method: 'GET', url: '/' })).json()).toEqual({ app: 'the host' });
    const openapi = await host.inject({ method: 'GET', url: '/deals/service/openapi.json' });
    expect(openapi.json().servers).toEqual([{ url: 'http://service.test/deals' }]);
    // Paths are relative to the server URL, which carries the prefix.
    expect(Object.keys(openapi.json().paths)).toContain('/service/deals/new');
  });
});
