import { createHmac } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { TestContext } from './app.js';

/** Inbound-webhook test helpers: signatures computed here from the spec, not by the service's code. */

export const INBOUND = '/service/settings/inbound-webhooks';

export const hmacHex = (secret: string, body: string | Buffer) => createHmac('sha256', secret).update(body).digest('hex');
export const signature = (secret: string, body: string | Buffer) => `sha256=${hmacHex(secret, body)}`;

export interface TestSource {
  id: string;
  secret: string;
  name: string;
}

export async function createSource(t: TestContext, source: { name?: string; pipeline?: number } = {}): Promise<TestSource> {
  const res = await t.call({ method: 'POST', url: `${INBOUND}/new`, payload: { source: { name: source.name ?? 'Test source', pipeline: source.pipeline } } });
  if (res.statusCode !== 200) throw new Error(`source create failed: ${res.body}`);
  const { id, secret, name } = res.json().source;
  return { id, secret, name };
}

/** A receive signed with the source's secret unless a header is given. */
export function receive(
  t: TestContext,
  source: Pick<TestSource, 'id' | 'secret'>,
  body: string | Buffer | object,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return t.app.inject({
    method: 'POST',
    url: `${INBOUND}/${source.id}/receive`,
    headers: { 'content-type': 'application/json', 'x-service-signature': signature(source.secret, payload), ...headers },
    payload,
  });
}
