import { describe, expect, it } from 'vitest';
import { setupApp } from './helpers/app.js';

describe('meta routes', () => {
  it('serves health, the OpenAPI document generated from the routes, and the rendered reference, without credentials', async () => {
    const t = await setupApp();
    const health = await t.app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });

    const openapi = await t.app.inject({ method: 'GET', url: '/service/openapi.json' });
    expect(openapi.statusCode).toBe(200);
    const paths = Object.keys(openapi.json().paths);
    for (const path of [
      '/service/{id}/view',
      '/service/deals',
      '/service/deals/new',
      '/service/{id}/stage',
      '/service/pipelines',
      '/service/settings/inbound-webhooks/{sourceId}/receive',
      '/host/webhooks',
      '/oauth/v2/token',
    ]) {
      expect(paths).toContain(path);
    }
    // Request schemas come from the zod schemas: the create body names deal[title].
    const create = openapi.json().paths['/service/deals/new'].post;
    expect(JSON.stringify(create.requestBody)).toContain('title');

    const docs = await t.app.inject({ method: 'GET', url: '/service/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toContain('text/html');
  });
});
