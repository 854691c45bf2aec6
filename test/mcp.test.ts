import { createServer, type AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '../src/mcp/deal-tools.js';
import { createBuiltinHost } from '../src/host/builtin/index.js';
import { createDatabase } from '../src/db/database.js';
import { ADMIN, basic, setupApp, type TestContext } from './helpers/app.js';
import { createDeal, createPipeline, createUser, type TestPipeline, type TestUser } from './helpers/factories.js';

/** The MCP endpoint driven by the SDK's own client over HTTP, on a real port. */

let t: TestContext;
let endpoint: URL;
let pipeline: TestPipeline;
const clients: Client[] = [];

beforeAll(async () => {
  t = await setupApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  endpoint = new URL(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/service/mcp`);
  pipeline = await createPipeline(t.db);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

async function connect(user: { username: string; password: string } = ADMIN): Promise<Client> {
  const client = new Client({ name: 'deal-tools-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: basic(user) } } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<ToolAnswer>;

const text = (answer: ToolAnswer) => answer.content.map((part) => part.text).join('');

/** A successful tool answer's structured content (its text is the same JSON). */
function ok<T>(answer: ToolAnswer): T {
  expect(answer.isError, text(answer)).toBeFalsy();
  expect(JSON.parse(text(answer))).toEqual(answer.structuredContent);
  return answer.structuredContent as T;
}

interface Deal {
  id: number;
  title: string;
  status: string;
  stage: { id: number };
  lostReason: string | null;
  wonAt: string | null;
  notes: { body: string }[];
  tasks: { title: string; dueDate: string | null }[];
}

describe('MCP endpoint', () => {
  it('initializes and lists the deal tools with their input schemas', async () => {
    const client = await connect();
    expect(client.getServerVersion()?.name).toBe('deal-pipeline-service');
    expect(client.getServerCapabilities()?.tools).toBeDefined();

    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()].sort()).toEqual(
      ['add_note', 'add_task', 'create_deal', 'get_deal', 'list_pipelines', 'move_deal_stage', 'pipeline_summary', 'search_deals'].sort(),
    );
    for (const tool of tools) {
      expect(tool.description, tool.name).toBeTruthy();
      expect(tool.inputSchema.type).toBe('object');
    }
    const create = byName.get('create_deal')!.inputSchema as unknown as { required?: string[]; properties: { deal: { required: string[]; properties: Record<string, object> } } };
    expect(create.required).toEqual(['deal']);
    expect(create.properties.deal.required).toEqual(['title']);
    expect(create.properties.deal.properties.title).toMatchObject({ type: 'string', maxLength: 255 });
    const move = byName.get('move_deal_stage')!.inputSchema as { required?: string[]; properties: Record<string, object> };
    expect(move.required?.sort()).toEqual(['deal_id', 'stage_id']);
    expect(Object.keys(move.properties).sort()).toEqual(['deal_id', 'lost_reason', 'stage_id']);
    const search = byName.get('search_deals')!.inputSchema as { properties: Record<string, object> };
    expect(Object.keys(search.properties)).toEqual(expect.arrayContaining(['search', 'pipeline', 'stage', 'status', 'owner', 'after', 'limit']));
    expect(byName.get('get_deal')!.annotations?.readOnlyHint).toBe(true);
    expect(byName.get('create_deal')!.annotations?.readOnlyHint).toBe(false);
  });

  it('works a deal from creation to won: note, task, stage moves; the REST API shows the status and the events', async () => {
    const client = await connect();
    const [openA, openB, won] = pipeline.stages;

    const { deal } = ok<{ deal: Deal }>(
      await call(client, 'create_deal', { deal: { title: 'Acme renewal', amount: '1200.50', currency: 'eur', pipeline: pipeline.id } }),
    );
    expect(deal).toMatchObject({ title: 'Acme renewal', status: 'open', stage: { id: openA!.id } });

    const { note } = ok<{ note: { body: string } }>(
      await call(client, 'add_note', { deal_id: deal.id, note: { body: '<p>Call went well</p><script>alert(1)</script>' } }),
    );
    expect(note.body).toBe('<p>Call went well</p>'); // the same sanitizing as the API
    ok(await call(client, 'add_task', { deal_id: deal.id, task: { title: 'Send the quote', dueDate: '2026-12-01' } }));

    const viewed = ok<{ deal: Deal }>(await call(client, 'get_deal', { deal_id: String(deal.id) })).deal;
    expect({ deal: viewed }).toEqual((await t.call({ method: 'GET', url: `/service/${deal.id}/view` })).json()); // the REST answer, field for field
    expect(viewed.notes.map((n) => n.body)).toEqual(['<p>Call went well</p>']);
    expect(viewed.tasks).toEqual([expect.objectContaining({ title: 'Send the quote', dueDate: '2026-12-01' })]);

    expect(ok<{ deal: Deal }>(await call(client, 'move_deal_stage', { deal_id: deal.id, stage_id: openB!.id })).deal.stage.id).toBe(openB!.id);
    const closed = ok<{ deal: Deal }>(await call(client, 'move_deal_stage', { deal_id: deal.id, stage_id: won!.id })).deal;
    expect(closed).toMatchObject({ status: 'won', stage: { id: won!.id } });

    const rest = await t.call({ method: 'GET', url: `/service/${deal.id}/view` });
    expect(rest.statusCode).toBe(200);
    expect(rest.json().deal).toMatchObject({ status: 'won', amount: 1200.5, currency: 'EUR', createdBy: { id: 1 } });
    expect(rest.json().deal.wonAt).not.toBeNull();
    const history = (await t.call({ method: 'GET', url: `/service/${deal.id}/history` })).json().history as { to: { id: number } }[];
    expect(history.map((entry) => entry.to.id)).toEqual([openA!.id, openB!.id, won!.id]);

    const events = await t.db.selectFrom('event_outbox').select('event').where('deal_id', '=', deal.id).orderBy('sequence').execute();
    expect(events.map((e) => e.event)).toEqual([
      'service.deal.created',
      'service.deal.note_added',
      'deal.stage_changed',
      'deal.stage_changed',
      'service.deal.won',
    ]);
  });

  it('moves a deal to lost with the lost reason', async () => {
    const client = await connect();
    const lost = pipeline.stages[3]!;
    const { deal } = ok<{ deal: Deal }>(await call(client, 'create_deal', { deal: { title: 'Globex', pipeline: pipeline.id } }));
    const moved = ok<{ deal: Deal }>(await call(client, 'move_deal_stage', { deal_id: deal.id, stage_id: lost.id, lost_reason: 'Budget cut' })).deal;
    expect(moved).toMatchObject({ status: 'lost', lostReason: 'Budget cut' });
    expect((await t.call({ method: 'GET', url: `/service/${deal.id}/view` })).json().deal).toMatchObject({ status: 'lost', lostReason: 'Budget cut' });
  });

  it('searches with the list filters and a cursor, and sums a pipeline', async () => {
    const client = await connect();
    const other = await createPipeline(t.db);
    const ids = [];
    for (const title of ['Zeta one', 'Zeta two', 'Zeta three']) ids.push((await createDeal(t.db, { title, pipelineId: other.id, amount: '100' })).id);
    await createDeal(t.db, { title: 'Unrelated', pipelineId: other.id });

    const first = ok<{ deals: { id: number }[]; next: string | null; total: number }>(
      await call(client, 'search_deals', { search: 'zeta', pipeline: other.id, status: 'open', limit: 2 }),
    );
    expect(first.total).toBe(3);
    expect(first.deals.map((d) => d.id)).toEqual(ids.slice(0, 2));
    const second = ok<{ deals: { id: number }[]; next: string | null }>(
      await call(client, 'search_deals', { search: 'zeta', pipeline: other.id, status: 'open', limit: 2, after: first.next }),
    );
    expect(second.deals.map((d) => d.id)).toEqual(ids.slice(2));
    expect(second.next).toBeNull();

    const { summary } = ok<{ summary: { totals: { currency: string; count: number; amount: number }[] } }>(
      await call(client, 'pipeline_summary', { pipeline_id: other.id, search: 'zeta' }),
    );
    expect(summary.totals).toEqual([expect.objectContaining({ currency: 'USD', count: 3, amount: 300 })]);

    const { pipelines } = ok<{ pipelines: { id: number; stages: { id: number }[] }[] }>(await call(client, 'list_pipelines', {}));
    expect(pipelines.find((p) => p.id === other.id)?.stages.map((s) => s.id)).toEqual(other.stages.map((s) => s.id));
  });

  describe('errors come back as tool errors with the contract message', () => {
    let seller: TestUser;
    let sellerClient: Client;

    beforeAll(async () => {
      seller = await createUser(t.db, ['service:deals:viewown', 'service:deals:editown', 'service:pipelines:view'], { name: 'Sam Seller' });
      sellerClient = await connect(seller);
    });

    it('a seller without create rights gets a permission error, and nothing is created', async () => {
      const before = await t.db.selectFrom('deals').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const answer = await call(sellerClient, 'create_deal', { deal: { title: 'Not mine to make' } });
      expect(answer.isError).toBe(true);
      expect(text(answer)).toBe('You do not have permission to do this');
      expect(answer.structuredContent).toEqual({
        errors: [{ code: 403, type: 'forbidden', message: 'You do not have permission to do this', details: {} }],
      });
      const after = await t.db.selectFrom('deals').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
    });

    it("a seller may not see or move another user's deal, but works their own", async () => {
      const admins = await createDeal(t.db, { title: 'Admin only', pipelineId: pipeline.id });
      const view = await call(sellerClient, 'get_deal', { deal_id: admins.id });
      expect(view).toMatchObject({ isError: true });
      expect(text(view)).toBe('You may not view this deal');
      const move = await call(sellerClient, 'move_deal_stage', { deal_id: admins.id, stage_id: pipeline.stages[2]!.id });
      expect(text(move)).toBe('You may not edit this deal');
      expect((await t.call({ method: 'GET', url: `/service/${admins.id}/view` })).json().deal.status).toBe('open');

      const own = await createDeal(t.db, { title: 'Sam deal', pipelineId: pipeline.id, ownerId: seller.id, createdById: seller.id });
      ok(await call(sellerClient, 'add_note', { deal_id: own.id, note: { body: 'Mine' } }));
      const found = ok<{ deals: { id: number }[] }>(await call(sellerClient, 'search_deals', { pipeline: pipeline.id }));
      expect(found.deals.map((d) => d.id)).toEqual([own.id]);
    });

    it('invalid input names the field as the REST API does', async () => {
      const client = await connect();
      const empty = await call(client, 'create_deal', { deal: { title: '   ' } });
      expect(empty.isError).toBe(true);
      expect(text(empty)).toBe('deal[title]: Required');
      expect(empty.structuredContent).toMatchObject({ errors: [{ code: 422, type: 'validation_failed', details: { 'deal[title]': ['Required'] } }] });

      // Worded exactly as the REST API's 422 for the same body.
      const restMove = await t.call({ method: 'POST', url: '/service/1/stage', payload: { stage_id: 'abc' } });
      expect(restMove.statusCode).toBe(422);
      const toolMove = await call(client, 'move_deal_stage', { deal_id: 1, stage_id: 'abc' });
      expect(text(toolMove)).toMatch(/^stage_id: /);
      expect(toolMove.structuredContent).toEqual(restMove.json());
      expect(text(await call(client, 'add_task', { deal_id: 1, task: { title: 'x', dueDate: '2026-02-30' } }))).toBe(
        'task[dueDate]: Must be a real calendar date',
      );
      const missing = await call(client, 'get_deal', {});
      expect(missing.isError).toBe(true);
      expect(missing.structuredContent).toMatchObject({ errors: [{ code: 422, details: { deal_id: [expect.any(String)] } }] });
      // A reference the service refuses (a stage that does not exist) comes back the same way.
      const { deal } = ok<{ deal: Deal }>(await call(client, 'create_deal', { deal: { title: 'Ref check', pipeline: pipeline.id } }));
      const wrongStage = await call(client, 'move_deal_stage', { deal_id: deal.id, stage_id: 2_000_000_000 });
      expect(wrongStage.isError).toBe(true);
      expect(wrongStage.structuredContent).toMatchObject({ errors: [{ code: 422, details: { stage_id: [expect.any(String)] } }] });
      expect(wrongStage.structuredContent).toEqual(
        (await t.call({ method: 'POST', url: `/service/${deal.id}/stage`, payload: { stage_id: 2_000_000_000 } })).json(),
      );
    });

    it('a missing deal is a not-found tool error', async () => {
      const client = await connect();
      const answer = await call(client, 'get_deal', { deal_id: 2_000_000_000 });
      expect(answer.isError).toBe(true);
      expect(text(answer)).toBe('Deal not found');
      expect(answer.structuredContent).toMatchObject({ errors: [{ code: 404, type: 'not_found' }] });
    });
  });

  it('a database outage during a tool is a 503 tool error, not a crash', async () => {
    // The tool layer over a database server that is down (the HTTP layer would answer 503 before any tool ran).
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    const down = createDatabase(`postgres://nobody:nothing@127.0.0.1:${port}/gone`, { max: 1 });
    try {
      const admin = { id: 1, name: 'Administrator', username: ADMIN.username, roleId: 1, isAdmin: true, permissions: new Set<string>() };
      const deps = { db: down.db, host: createBuiltinHost({ db: down.db, config: t.config }), config: t.config, actor: admin, log: t.app.log, requestId: 'outage-test' };
      const answer = await callTool(deps, 'search_deals', {});
      expect(answer.isError).toBe(true);
      expect(answer.structuredContent).toMatchObject({ errors: [{ code: 503, type: 'unavailable', details: { retryAfter: 5 } }] });
      expect(answer.content).toEqual([{ type: 'text', text: 'The database is unavailable; try again shortly' }]);
    } finally {
      await down.destroy();
    }
  });

  describe('HTTP', () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    };

    it('without credentials answers the contract 401, and the SDK client cannot connect', async () => {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(initialize),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="service"');
      expect(await response.json()).toEqual({ errors: [{ code: 401, type: 'unauthorized', message: 'Authentication required', details: {} }] });

      const client = new Client({ name: 'anonymous', version: '1.0.0' });
      await expect(client.connect(new StreamableHTTPClientTransport(endpoint))).rejects.toThrow();
      const wrong = new Client({ name: 'wrong', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(endpoint, {
        requestInit: { headers: { authorization: basic({ username: ADMIN.username, password: 'not-the-password' }) } },
      });
      await expect(wrong.connect(transport)).rejects.toThrow(/401/);
    });

    it('answers one JSON-RPC message in JSON with the request id, and refuses what MCP does not allow', async () => {
      const headers = { authorization: basic(ADMIN), 'content-type': 'application/json', 'x-request-id': 'mcp-test-1' };
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { ...headers, accept: 'application/json, text/event-stream' },
        body: JSON.stringify(initialize),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('x-request-id')).toBe('mcp-test-1');
      expect(response.headers.get('mcp-session-id')).toBeNull(); // stateless
      expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'deal-pipeline-service' } } });

      // Stateless: a tools/call needs no initialize before it (curl, scripts).
      const direct = await fetch(endpoint, {
        method: 'POST',
        headers: { ...headers, accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'get_deal', arguments: { deal_id: 2_000_000_000 } } }),
      });
      expect(direct.status).toBe(200);
      expect(await direct.json()).toMatchObject({ id: 'a', result: { isError: true, content: [{ type: 'text', text: 'Deal not found' }] } });

      const notification = await fetch(endpoint, {
        method: 'POST',
        headers: { ...headers, accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      expect(notification.status).toBe(202);
      const noMethod = await fetch(endpoint, {
        method: 'POST',
        headers: { ...headers, accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2 }),
      });
      expect(noMethod.status).toBe(422);
      expect((await noMethod.json()).errors[0]).toMatchObject({ code: 422, details: { method: [expect.any(String)] } });

      const nul = await fetch(endpoint, {
        method: 'POST',
        headers: { ...headers, accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'add_note', arguments: { deal_id: 1, note: { body: 'a\u0000b' } } } }),
      });
      expect(nul.status).toBe(422);
      expect((await nul.json()).errors[0].details).toEqual({ 'params[arguments][note][body]': ['Must not contain NUL characters'] });

      const notAcceptable = await fetch(endpoint, { method: 'POST', headers: { ...headers, accept: 'application/json' }, body: JSON.stringify(initialize) });
      expect(notAcceptable.status).toBe(406);
      expect((await notAcceptable.json()).errors[0]).toMatchObject({ code: 406, type: 'not_acceptable' });

      const form = await fetch(endpoint, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json, text/event-stream' },
        body: 'jsonrpc=2.0&method=initialize',
      });
      expect(form.status).toBe(415);
      expect((await form.json()).errors[0]).toMatchObject({ code: 415, type: 'unsupported_media_type' });

      const get = await fetch(endpoint, { headers: { authorization: basic(ADMIN), accept: 'text/event-stream' } });
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST');
    });

    it('is in the OpenAPI document with its credentials and error statuses', async () => {
      const document = (await t.call({ method: 'GET', url: '/service/openapi.json' })).json();
      const operation = document.paths['/service/mcp'].post;
      expect(operation.summary).toMatch(/Model Context Protocol/);
      expect(Object.keys(operation.responses).sort()).toEqual(
        ['200', '202', '400', '401', '403', '406', '409', '413', '415', '422', '429', '503'].sort(),
      );
      expect(document.paths['/service/mcp'].get).toBeUndefined();
    });
  });
});
