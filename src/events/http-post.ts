import http from 'node:http';
import https from 'node:https';
import type { TargetAgents } from './ssrf.js';

/** One delivery attempt over HTTP: no redirects followed, a hard deadline, a bounded response read. */

export interface PostResult {
  /** null when no response arrived (connection error, timeout, refused target). */
  statusCode: number | null;
  durationMs: number;
  /** The start of the response body, for the delivery log. */
  responseBody: string | null;
  error: string | null;
  /** Retry-After in milliseconds, when the receiver sent one. */
  retryAfterMs: number | null;
}

export interface PostOptions {
  url: string;
  headers: http.OutgoingHttpHeaders;
  body: string;
  timeoutMs: number;
  agents: TargetAgents;
  /** How much of the response body is kept. */
  responseLimit: number;
}

const USER_AGENT = 'deal-pipeline-service-webhooks/1.0';
/** Past this much, the rest of a response is not worth reading. */
const READ_LIMIT = 64 * 1024;

/** `Retry-After: <seconds>` or `Retry-After: <HTTP date>`, in milliseconds from now. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export function postJson(options: PostOptions): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const url = new URL(options.url);
  const secure = url.protocol === 'https:';
  const body = Buffer.from(options.body, 'utf8');

  return new Promise<PostResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<PostResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const fail = (error: string) => finish({ statusCode: null, responseBody: null, error, retryAfterMs: null });

    const request = (secure ? https : http).request(
      url,
      {
        method: 'POST',
        agent: secure ? options.agents.https : options.agents.http,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          'user-agent': USER_AGENT,
          ...options.headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          const statusCode = response.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8').slice(0, options.responseLimit);
          const location = response.headers.location;
          finish({
            statusCode,
            responseBody: text || null,
            error:
              statusCode >= 300 && statusCode < 400
                ? `Redirect not followed${location ? ` (Location: ${String(location).slice(0, 200)})` : ''}`
                : null,
            retryAfterMs: statusCode === 429 || statusCode === 503 ? parseRetryAfter(response.headers['retry-after']) : null,
          });
        };
        response.on('data', (chunk: Buffer) => {
          if (size < READ_LIMIT) chunks.push(chunk);
          size += chunk.length;
          if (size >= READ_LIMIT) {
            response.destroy();
            done();
          }
        });
        response.on('end', done);
        response.on('error', (error) => (size > 0 ? done() : fail(`Response failed: ${error.message}`)));
      },
    );
    // The 10 s are the target's: they start when the request has a socket, not while it waits for one of the pool's.
    let timer: NodeJS.Timeout | undefined;
    request.once('socket', () => {
      timer = setTimeout(() => {
        request.destroy();
        fail(`Timed out after ${options.timeoutMs} ms`);
      }, options.timeoutMs);
    });
    request.on('error', (error: NodeJS.ErrnoException) => fail(error.code ? `${error.code}: ${error.message}` : error.message));
    request.end(body);
  });
}
