import { spawnSync } from 'node:child_process';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { AppKeyMismatchError, resealSecrets, verifyAppKey } from '../src/crypto/key-check.js';
import { createBuiltinHost } from '../src/host/builtin/index.js';
import { setupApp, type TestContext } from './helpers/app.js';
import { createSource, receive, type TestSource } from './helpers/inbound.js';

const OLD = Buffer.alloc(32, 7); // the tests' APP_KEY (testConfig)
const NEW = Buffer.alloc(32, 9);

let t: TestContext;
let source: TestSource;
beforeAll(async () => {
  t = await setupApp();
  source = await createSource(t, { name: 'Sealed under the old key' });
});

/** The same database served with another APP_KEY (and optionally the old one beside it). */
async function appWith(keys: { APP_KEY: Buffer; APP_KEY_PREVIOUS?: Buffer }) {
  const config = { ...t.config, ...keys };
  const app = await buildApp({ config, db: t.db, logger: pino({ level: 'silent' }), host: createBuiltinHost({ db: t.db, config }) });
  await app.ready();
  return { ...t, app, config };
}

describe('APP_KEY against the stored secrets', () => {
  it('records a check value on first use from the stored secrets, then accepts the key and refuses another', async () => {
    await expect(verifyAppKey(t.db, [NEW])).rejects.toBeInstanceOf(AppKeyMismatchError); // probed with the source's secret
    expect(await t.db.selectFrom('app_key_check').selectAll().execute()).toEqual([]);
    await verifyAppKey(t.db, [OLD]);
    const [check] = await t.db.selectFrom('app_key_check').select('check_value').execute();
    expect(check!.check_value).not.toContain(OLD.toString('hex'));
    await verifyAppKey(t.db, [OLD]);
    await expect(verifyAppKey(t.db, [NEW])).rejects.toThrow(/^Invalid configuration: APP_KEY: /);
    await verifyAppKey(t.db, [NEW, OLD]); // a rotation in progress: the old key beside the new
  });

  it('refuses to start the server with one line naming APP_KEY, exit code 1', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { PATH: process.env.PATH, DATABASE_URL: t.url, APP_KEY: NEW.toString('hex'), PORT: '0', LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Invalid configuration: APP_KEY: does not open the stored secrets/);
    expect(result.stdout).not.toMatch(/listening/);
  });

  it('answers a receive whose source secret does not open with 503 and the error body, never 500', async () => {
    const wrong = await appWith({ APP_KEY: NEW });
    const res = await receive(wrong, source, { title: 'Lost?' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.json().errors[0]).toMatchObject({ code: 503, type: 'unavailable' });
    expect(res.json().errors[0].message).toMatch(/APP_KEY/);
    await wrong.app.close();
  });

  it('rotates: the old key beside the new serves, rekey re-seals everything, then the new key alone serves', async () => {
    const during = await appWith({ APP_KEY: NEW, APP_KEY_PREVIOUS: OLD });
    expect((await receive(during, source, { title: 'During the rotation' })).statusCode).toBe(200);
    await during.app.close();

    expect(await resealSecrets(t.db, [NEW, OLD])).toBeGreaterThanOrEqual(1);
    await verifyAppKey(t.db, [NEW]);
    await expect(verifyAppKey(t.db, [OLD])).rejects.toBeInstanceOf(AppKeyMismatchError);

    const after = await appWith({ APP_KEY: NEW });
    const res = await receive(after, source, { title: 'After the rotation' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: true, created: true });
    await after.app.close();
  });
});
