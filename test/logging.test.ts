import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createBuiltinHost } from '../src/host/builtin/index.js';
import { createLogger } from '../src/logger.js';
import { ADMIN, basic, createTestDatabase, testConfig } from './helpers/app.js';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, stream };
}

describe('logs', () => {
  it('redact passwords, secrets, tokens and credentials wherever they appear', () => {
    const { lines, stream } = capture();
    const logger = createLogger('info', stream);
    logger.info({ req: { headers: { authorization: 'Basic c2VjcmV0', 'x-service-signature': 'sha256=abc' } }, password: 'hunter2hunter2' }, 'one');
    logger.info({ user: { password: 'pw-in-object' }, source: { secret: 'shown-once' }, client_secret: 'cs', access_token: 'tok' }, 'two');
    logger.info({ credential: { client_secret: 'nested-cs' }, token: { access_token: 'nested-tok' }, row: { password_hash: 'scrypt$x', secret_encrypted: 'sealed-x' } }, 'three');
    const text = lines.join('');
    for (const secret of ['c2VjcmV0', 'sha256=abc', 'hunter2hunter2', 'pw-in-object', 'shown-once', '"cs"', '"tok"', 'nested-cs', 'nested-tok', 'scrypt$x', 'sealed-x']) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('[redacted]');
  });

  it('of a request carry no credentials', async () => {
    const { lines, stream } = capture();
    const { database, drop } = await createTestDatabase();
    const app = await buildApp({ config: testConfig(), db: database.db, logger: pino({ level: 'trace' }, stream), host: createBuiltinHost({ db: database.db, config: testConfig() }) });
    await app.inject({ method: 'GET', url: '/service/pipelines', headers: { authorization: basic({ username: 'admin', password: 'not-the-password-123' }) } });
    await app.inject({ method: 'GET', url: '/service/pipelines', headers: { authorization: basic(ADMIN) } });
    await app.close();
    await drop();
    const text = lines.join('');
    expect(text).toContain('/service/pipelines');
    expect(text).not.toContain('not-the-password-123');
    expect(text).not.toContain(Buffer.from('admin:not-the-password-123').toString('base64'));
  });
});
