import { describe, expect, it } from 'vitest';
import { setupApp, ADMIN } from './helpers/app.js';
import { createUser } from './helpers/factories.js';

describe('foundation', () => {
  it('serves the Sales pipeline to the admin and 401 without credentials', async () => {
    const t = await setupApp();
    const ok = await t.call({ method: 'GET', url: '/service/pipelines' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().pipelines[0].name).toBe('Sales');
    expect(ok.json().pipelines[0].stages.map((s: { name: string }) => s.name)).toEqual([
      'Qualification', 'Discovery', 'Proposal', 'Negotiation', 'Won', 'Lost',
    ]);
    const anonymous = await t.app.inject({ method: 'GET', url: '/service/pipelines' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Basic realm="service"');
    const user = await createUser(t.db, []);
    const forbidden = await t.call({ method: 'GET', url: '/service/pipelines' }, user);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().errors[0].type).toBe('forbidden');
    expect(ADMIN.username).toBe('admin');
  });
});
