import type { Logger } from 'pino';
import { UnavailableError } from '../../http/errors.js';

export type ServiceCredentials = { username: string; password: string } | { clientId: string; clientSecret: string };

export interface MauticResponse {
  status: number;
  body: any;
}

export interface MauticClient {
  /** A call made as this service (Basic or a client-credentials token). */
  service(method: string, path: string, body?: unknown): Promise<MauticResponse>;
  /** A call made with the caller's own Authorization header (checking who they are). */
  asCaller(authorization: string, path: string): Promise<MauticResponse>;
}

/** Renew a client-credentials token this long before Mautic says it expires, so no call races its expiry. */
const TOKEN_MARGIN_MS = 60_000;

/**
 * Mautic over HTTP. Anything that says "the host cannot answer now" (network
 * error, timeout, 5xx, a non-JSON answer) becomes an UnavailableError, so a
 * write that needs Mautic answers 503 with Retry-After and the caller retries;
 * 4xx answers are returned for the adapter to interpret. Authorization headers
 * and tokens are never logged.
 */
export function createMauticClient(options: {
  baseUrl: string;
  timeoutMs: number;
  credentials: ServiceCredentials;
  logger: Logger;
}): MauticClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const { credentials, logger } = options;
  let token: { value: string; renewAt: number } | undefined;

  async function send(method: string, path: string, authorization: string | undefined, body?: unknown, form?: URLSearchParams): Promise<MauticResponse> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (authorization) headers.authorization = authorization;
    let payload: string | undefined;
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = form.toString();
    } else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, { method, headers, body: payload, signal: AbortSignal.timeout(options.timeoutMs) });
    } catch (error) {
      const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${options.timeoutMs} ms` : 'unreachable';
      logger.warn({ method, path: path.split('?')[0], reason }, 'Mautic call failed');
      throw new UnavailableError(`The host platform (Mautic) is ${reason === 'unreachable' ? 'unreachable' : 'not answering'}; try again shortly.`);
    }
    const text = await response.text().catch(() => '');
    if (response.status >= 500) {
      logger.warn({ method, path: path.split('?')[0], status: response.status }, 'Mautic answered with a server error');
      throw new UnavailableError('The host platform (Mautic) answered with an error; try again shortly.');
    }
    let parsed: any = null;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        logger.warn({ method, path: path.split('?')[0], status: response.status }, 'Mautic answered with something other than JSON');
        throw new UnavailableError('The host platform (Mautic) gave an unreadable answer; try again shortly.');
      }
    }
    return { status: response.status, body: parsed };
  }

  async function serviceAuthorization(renew = false): Promise<string> {
    if ('username' in credentials) {
      return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    }
    if (!renew && token && token.renewAt > Date.now()) return `Bearer ${token.value}`;
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: credentials.clientId, client_secret: credentials.clientSecret });
    const answer = await send('POST', '/oauth/v2/token', undefined, undefined, form);
    if (answer.status !== 200 || typeof answer.body?.access_token !== 'string') {
      logger.error({ status: answer.status, error: answer.body?.errors?.[0]?.type }, 'Mautic refused the service client credentials');
      throw new UnavailableError('The host platform (Mautic) refused this service\'s API credentials; check MAUTIC_CLIENT_ID and MAUTIC_CLIENT_SECRET.');
    }
    const lifetimeMs = Number(answer.body.expires_in ?? 3600) * 1000;
    token = { value: answer.body.access_token, renewAt: Date.now() + Math.max(lifetimeMs - TOKEN_MARGIN_MS, lifetimeMs / 2) };
    return `Bearer ${token.value}`;
  }

  return {
    async service(method, path, body) {
      let answer = await send(method, path, await serviceAuthorization(), body);
      // A token Mautic revoked early: get a new one once.
      if (answer.status === 401 && 'clientId' in credentials) answer = await send(method, path, await serviceAuthorization(true), body);
      if (answer.status === 401 || answer.status === 403) {
        logger.error({ method, path: path.split('?')[0], status: answer.status, error: answer.body?.errors?.[0]?.type }, 'Mautic refused this service\'s own call');
        throw new UnavailableError('The host platform (Mautic) refused this service\'s credentials or permissions.');
      }
      return answer;
    },
    asCaller(authorization, path) {
      return send('GET', path, authorization);
    },
  };
}

/** Mautic lists are objects keyed by id (empty: `{}`) or, for some entities, arrays. */
export function listOf(value: unknown): any[] {
  if (Array.isArray(value)) return value;
  if (value && typeof value === 'object') return Object.values(value);
  return [];
}
