import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.js';

/** HTTP Basic (a user of the host), a bearer token, or an API credential's OAuth client (tokens fetched and renewed). */
export type Credentials =
  | { username: string; password: string }
  | { token: string }
  | { clientId: string; clientSecret: string };

export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** The longest single wait (default 30 s). A Retry-After asking for more is not shortened: the answer is returned instead. */
  maxDelayMs?: number;
  /** The first wait when the answer has no Retry-After, doubled on each retry (default 500 ms). */
  baseDelayMs?: number;
}

export interface DealClientOptions {
  /** Where the service is mounted, e.g. `https://deals.example.com` (paths start with /service and /host). */
  baseUrl: string;
  credentials: Credentials;
  retry?: RetryOptions;
  /** The fetch underneath (default globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>;
}

export type DealClient = Client<paths>;

/** 429 (over a rate) and 503 (database or host platform unavailable) are the answers the service asks to retry. */
const RETRIED = new Set([429, 503]);

/**
 * The wait a Retry-After header asks for, in ms: delta-seconds or an HTTP date
 * (RFC 9110 section 10.2.3). Undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * A fetch that sends a request again on 429 and 503, waiting what Retry-After
 * says (never less), else an exponential backoff; at most `retries` times and
 * never longer than `maxDelayMs` per wait. Other answers, and the last one, are
 * returned as they are. Both statuses mean the request was not carried out, so
 * writes are retried too.
 */
export function retryingFetch(
  options: RetryOptions & { fetch?: (request: Request) => Promise<Response>; sleep?: (ms: number) => Promise<void> } = {},
): (request: Request) => Promise<Response> {
  const retries = options.retries ?? 3;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  return async (request) => {
    for (let attempt = 0; ; attempt += 1) {
      // A clone per attempt: a body can be read once.
      const response = await send(request.clone());
      if (!RETRIED.has(response.status) || attempt >= retries) return response;
      const delay = retryAfterMs(response.headers.get('retry-after')) ?? baseDelayMs * 2 ** attempt;
      if (delay > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(delay);
    }
  };
}

/** Fetches a bearer token with client credentials; renews it shortly before it expires. */
function tokenSource(baseUrl: string, clientId: string, clientSecret: string, send: (request: Request) => Promise<Response>) {
  let cached: { token: string; until: number } | undefined;
  return async (): Promise<string> => {
    if (cached && Date.now() < cached.until) return cached.token;
    const response = await send(
      new Request(new URL('/oauth/v2/token', baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
      }),
    );
    if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => undefined));
    const answer = (await response.json()) as { access_token: string; expires_in: number };
    cached = { token: answer.access_token, until: Date.now() + Math.max(0, answer.expires_in - 30) * 1000 };
    return cached.token;
  };
}

/** A typed client (openapi-fetch over the generated `paths`) with credentials and bounded retries. */
export function createDealClient(options: DealClientOptions): DealClient {
  const send = retryingFetch({ ...options.retry, fetch: options.fetch });
  const { credentials } = options;
  const authorization: () => Promise<string> =
    'username' in credentials
      ? async () => `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`
      : 'token' in credentials
        ? async () => `Bearer ${credentials.token}`
        : (() => {
            const token = tokenSource(options.baseUrl, credentials.clientId, credentials.clientSecret, send);
            return async () => `Bearer ${await token()}`;
          })();
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    fetch: async (request) => {
      request.headers.set('authorization', await authorization());
      return send(request);
    },
  });
}

/** The error body of every failure, as the service documents it. */
export type ErrorBody = { errors: { code: number; message: string; details: Record<string, unknown>; type: string }[] };

/** A failed call: the status and the service's error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody | undefined,
  ) {
    super(body?.errors?.[0]?.message ?? `HTTP ${status}`);
    this.name = 'ApiError';
  }
}

export type DealListQuery = NonNullable<paths['/service/deals']['get']['parameters']['query']>;
export type DealListPage = paths['/service/deals']['get']['responses'][200]['content']['application/json'];
export type DealSummary = DealListPage['deals'][number];

/**
 * The deal list page by page, following the cursor (`after` = the previous
 * page's `next`) until there is none. Throws ApiError on a failed page.
 */
export async function* dealPages(client: DealClient, query: Omit<DealListQuery, 'after' | 'page'> = {}): AsyncGenerator<DealListPage> {
  let after: string | undefined;
  do {
    const { data, error, response } = await client.GET('/service/deals', { params: { query: { ...query, ...(after ? { after } : {}) } } });
    if (!data) throw new ApiError(response.status, error as ErrorBody | undefined);
    yield data;
    after = data.next ?? undefined;
  } while (after);
}

/** Every deal matching the query, one at a time, across cursor pages. */
export async function* allDeals(client: DealClient, query: Omit<DealListQuery, 'after' | 'page'> = {}): AsyncGenerator<DealSummary> {
  for await (const page of dealPages(client, query)) yield* page.deals;
}
