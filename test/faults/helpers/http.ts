import { basic } from '../../helpers/app.js';

/** fetch against a spawned service, as the admin, never waiting forever. */

export const APP_KEY = '07'.repeat(32);
export const ADMIN = { username: 'admin', password: 'fault-suite-admin-password' };
export const AUTH = basic(ADMIN);

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  ms: number;
}

export async function call(
  base: string,
  path: string,
  options: { method?: string; json?: unknown; body?: string | Buffer; headers?: Record<string, string>; timeoutMs?: number; auth?: boolean } = {},
): Promise<Answer> {
  const started = Date.now();
  const headers: Record<string, string> = { ...(options.auth === false ? {} : { authorization: AUTH }), ...options.headers };
  let body: string | Buffer | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${path}`, {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: kept as text for the assertion message
  }
  return { status: res.status, headers: res.headers, body: parsed, ms: Date.now() - started };
}

/** The contract's error body for a 503, with Retry-After. */
export function isUnavailable(answer: Answer): boolean {
  const error = answer.body?.errors?.[0];
  return answer.status === 503 && error?.code === 503 && typeof error.message === 'string' && typeof error.type === 'string' && Number(answer.headers.get('retry-after')) > 0;
}
