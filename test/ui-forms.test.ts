import { beforeAll, describe, expect, it } from 'vitest';
import { csrfTokenFor, SESSION_COOKIE } from '../src/http/session.js';
import { createDealsInTransaction } from '../src/domain/deals/deals.service.js';
import { ADMIN, setupApp, type TestContext } from './helpers/app.js';
import { createPipeline, createUser, defaultPipeline, type TestPipeline } from './helpers/factories.js';

/** Page forms and the board at scale, through app.inject with a page session. */

let t: TestContext;
let pipeline: TestPipeline;
let session: { cookie: string; csrf: string };

beforeAll(async () => {
  t = await setupApp();
  pipeline = await defaultPipeline(t.db);
  const login = await t.app.inject({ method: 'POST', url: '/service/login', payload: ADMIN });
  const token = login.cookies.find((c) => c.name === SESSION_COOKIE)!.value;
  session = { cookie: `${SESSION_COOKIE}=${token}`, csrf: csrfTokenFor(token) };
});

const post = (url: string, form: Record<string, string>) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded', 'hx-request': 'true' },
    payload: new URLSearchParams({ ...form, _csrf: session.csrf }).toString(),
  });

describe('page forms', () => {
  it('answers a refused quick add with the form, the errors in words next to the fields, and what was typed', async () => {
    const stage = pipeline.stages[0]!;
    const response = await post('/service/ui/board/deals', {
      'deal[title]': '   ',
      'deal[amount]': '<b>12,50</b>',
      'deal[stage]': String(stage.id),
      'deal[pipeline]': String(pipeline.id),
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/text\/html/);
    expect(response.body).toMatch(/name="deal\[title\]"[^>]*>\s*<span class="field-error">Required<\/span>/);
    expect(response.body).toContain('Must be a non-negative amount with at most 2 decimals');
    expect(response.body).toContain('value="&lt;b&gt;12,50&lt;/b&gt;"');
    expect(await t.db.selectFrom('deals').select('id').execute()).toEqual([]);
  });

  it('answers a domain refusal of a task with the message on the form', async () => {
    const [deal] = await t.db.transaction().execute((trx) =>
      createDealsInTransaction(trx, [{ ctx: { changedBy: { id: 1, name: 'Seed' } }, input: { title: 'Form deal', currency: 'USD', stageId: pipeline.stages[0]!.id, ownerId: 1, createdById: 1 } }]),
    );
    const response = await post(`/service/ui/deals/${deal!.id}/tasks`, { 'task[title]': 'Call back', 'task[dueDate]': '2026-02-30', 'task[assignee]': '' });
    expect(response.body).toContain('Must be a real calendar date');
    expect(response.body).toContain('value="Call back"');
  });

  it('shows an HTML page, not the JSON body, for a page the user may not open', async () => {
    const nobody = await createUser(t.db, []);
    const login = await t.app.inject({ method: 'POST', url: '/service/login', payload: { username: nobody.username, password: nobody.password } });
    const cookie = `${SESSION_COOKIE}=${login.cookies.find((c) => c.name === SESSION_COOKIE)!.value}`;
    const response = await t.app.inject({ method: 'GET', url: '/service/board', headers: { cookie, accept: 'text/html' } });
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-type']).toMatch(/text\/html/);
    expect(response.headers['www-authenticate']).toBeUndefined();
    expect(response.body).toContain('Not allowed');
  });
});

describe('board at scale', () => {
  it('renders a 10,000-deal pipeline with 50 cards per column, quickly', async () => {
    const big = await createPipeline(t.db, { name: 'Big' });
    const open = big.stages.filter((s) => s.type === 'open');
    for (let batch = 0; batch < 10; batch++) {
      await t.db.transaction().execute((trx) =>
        createDealsInTransaction(
          trx,
          Array.from({ length: 1000 }, (_, i) => ({
            ctx: { changedBy: { id: 1, name: 'Seed' } },
            input: { title: `Scale ${batch}-${i}`, amount: String(100 + i), currency: 'USD', stageId: open[i % open.length]!.id, ownerId: 1, createdById: 1 },
          })),
        ),
      );
    }
    const board = () => t.app.inject({ method: 'GET', url: `/service/board?pipeline=${big.id}`, headers: { cookie: session.cookie, accept: 'text/html' } });
    // How fast is bench/board.ts's business (npm run bench:board); here: what a 10,000-deal board holds.
    const response = await board();
    expect(response.statusCode).toBe(200);
    expect(response.body.match(/class="card[ "]/g)).toHaveLength(50 * open.length);
    expect(response.body).toContain('5000 deals');
  }, 120_000);
});
