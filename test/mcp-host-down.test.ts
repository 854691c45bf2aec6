import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { seedPipelines } from '../src/domain/pipelines/seed.js';
import { createMauticHost } from '../src/host/mautic/index.js';
import { basic, createTestDatabase, testConfig } from './helpers/app.js';
import { ADMIN_ROLE, doubleUser, startMauticDouble, type MauticDouble } from './mautic-double/index.js';

/** The MCP tools on a Mautic host: Mautic down is a 503 tool error, as it is a 503 answer of the REST API. */

const MIA = { username: 'mia', password: 'mia-password' };

let mautic: MauticDouble;
let app: FastifyInstance;
let client: Client;

beforeAll(async () => {
  mautic = await startMauticDouble({
    users: [doubleUser(5, 'mia', MIA.password, ADMIN_ROLE, 'Mia Admin'), doubleUser(6, 'sam', 'sam-password', ADMIN_ROLE, 'Sam Seller')],
  });
  const test = await createTestDatabase();
  await seedPipelines(test.database.db);
  const config = testConfig({
    HOST_PLATFORM: 'mautic',
    MAUTIC_URL: mautic.url,
    MAUTIC_USERNAME: MIA.username,
    MAUTIC_PASSWORD: MIA.password,
    MAUTIC_WEBHOOK_SECRET: 'mautic-webhook-secret-for-tests',
    HOST_TIMEOUT_MS: '300',
  });
  const host = createMauticHost({ db: test.database.db, config, logger: pino({ level: 'silent' }) });
  app = await buildApp({ config, db: test.database.db, logger: pino({ level: 'silent' }), host });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const endpoint = new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/service/mcp`);
  client = new Client({ name: 'host-down-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: basic(MIA) } } }));
  return async () => {
    await client.close();
    await app.close();
    await host.close?.();
    await mautic.close();
    await test.drop();
  };
}, 60_000);

interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

describe('MCP tools while the host platform is down', () => {
  it('a create naming an owner the service must fetch from Mautic is a 503 tool error, and works once Mautic is back', async () => {
    const create = () => client.callTool({ name: 'create_deal', arguments: { deal: { title: 'Umbrella pilot', owner: 6 } } }) as Promise<ToolAnswer>;
    await mautic.setMode('down');
    try {
      const answer = await create();
      expect(answer.isError).toBe(true);
      expect(answer.content[0]!.text).toBeTruthy();
      const error = (answer.structuredContent as { errors: { code: number; message: string; details: { retryAfter?: number } }[] }).errors[0]!;
      expect(error.code).toBe(503);
      expect(error.message).toBe(answer.content[0]!.text);
      expect(error.details.retryAfter).toBeGreaterThan(0);
    } finally {
      await mautic.setMode('up');
    }
    const again = await create();
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent).toMatchObject({ deal: { title: 'Umbrella pilot', owner: { id: 6, name: 'Sam Seller' } } });
  });
});
