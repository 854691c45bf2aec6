import { describe, expect, it } from 'vitest';
import { ADMIN, basic, setupApp } from './helpers/app.js';

describe('TRUST_PROXY', () => {
  it('counts failed logins per client address from X-Forwarded-For behind a proxy', async () => {
    const t = await setupApp({ config: { TRUST_PROXY: 'true' } });
    const wrong = basic({ username: ADMIN.username, password: 'not-the-password' });
    const from = (address: string, authorization: string) =>
      t.app.inject({ method: 'GET', url: '/service/pipelines', headers: { authorization, 'x-forwarded-for': address } });
    for (let i = 0; i < 10; i++) expect((await from('203.0.113.7', wrong)).statusCode).toBe(401);
    expect((await from('203.0.113.7', basic(ADMIN))).statusCode).toBe(429);
    // Another client behind the same proxy is not locked out.
    expect((await from('198.51.100.4', basic(ADMIN))).statusCode).toBe(200);
  });
});
