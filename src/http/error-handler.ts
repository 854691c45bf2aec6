import { errorCodes, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import {
  AppError,
  ConflictError,
  NotFoundError,
  PayloadTooLargeError,
  UnavailableError,
  UnsupportedMediaTypeError,
  ValidationError,
  type FieldErrors,
} from './errors.js';

/** `/deal/title` → `deal[title]`, `/ids/3` → `ids[3]`: inputs named as the client sent them. */
export function bracketName(instancePath: string, fallback: string): string {
  const [head, ...rest] = instancePath.split('/').filter(Boolean);
  if (!head) return fallback;
  return head + rest.map((part) => `[${part}]`).join('');
}

interface ValidationIssue {
  instancePath: string;
  message?: string;
  params?: { keys?: string[] };
}

const TYPE_WORDS: Record<string, string> = { array: 'a list', object: 'an object', string: 'text', number: 'a number', boolean: 'true or false' };

/** zod's default wording ("Invalid input: expected array, received undefined") in the words our own messages use. */
function humanMessage(message: string | undefined): string {
  if (!message) return 'Invalid value';
  const typed = /^Invalid input: expected (\w+), received (\w+)$/.exec(message);
  if (typed) return typed[2] === 'undefined' ? 'Required' : `Must be ${TYPE_WORDS[typed[1]!] ?? typed[1]}`;
  if (message === 'Invalid input') return 'Invalid value';
  const option = /^Invalid option: expected one of (.+)$/.exec(message);
  if (option) return `Must be one of ${option[1]!.replace(/\|/g, ', ')}`;
  return message;
}

function validationDetails(issues: ValidationIssue[], context: string | undefined): FieldErrors {
  const details: FieldErrors = {};
  for (const issue of issues) {
    const names = issue.params?.keys?.length
      ? issue.params.keys.map((key) => bracketName(`${issue.instancePath}/${key}`, key))
      : [bracketName(issue.instancePath, context ?? 'body')];
    for (const name of names) (details[name] ??= []).push(humanMessage(issue.message));
  }
  return details;
}

const PG_UNAVAILABLE = /^(08|53|57P0[123])/;
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

function isDatabaseDown(error: { code?: string; message?: string }): boolean {
  if (error.code && (PG_UNAVAILABLE.test(error.code) || NETWORK_CODES.has(error.code))) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Cannot use a pool after calling end/i.test(
    error.message ?? '',
  );
}

/** Errors of reading the body, which Fastify's messages do not describe: the request does (its limit, its content type). */
function bodyReadError(error: FastifyError, request: FastifyRequest): AppError | undefined {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new PayloadTooLargeError(request.routeOptions.bodyLimit);
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new UnsupportedMediaTypeError(request.headers['content-type']);
  return undefined;
}

/** Maps anything thrown during a request to an AppError (or undefined for a genuine fault). */
export function toAppError(error: FastifyError & { code?: string; constraint?: string }): AppError | undefined {
  if (error instanceof AppError) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    // A path id that is not a positive integer names nothing: 404, as the contract says.
    if (error.validationContext === 'params') return new NotFoundError();
    return new ValidationError(validationDetails(error.validation as ValidationIssue[], error.validationContext));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return ValidationError.field('body', 'The body does not match its Content-Length');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return ValidationError.field('body', 'Body is not valid JSON');
    case 'FST_ERR_VALIDATION':
      return ValidationError.field(error.validationContext ?? 'body', error.message);
    case '23505':
      return new ConflictError('A record with these values already exists', { constraint: error.constraint });
    case '23503':
      return ValidationError.field('reference', 'Refers to a record that does not exist');
    case '22021': // a NUL character in text
    case '22P05': // a NUL character in JSON
      return ValidationError.field('body', 'Text must not contain NUL characters');
    case '22P02':
    case '22003':
    case '22007':
    case '22008':
      return ValidationError.field('body', 'A value is out of range or malformed');
  }
  if (error instanceof SyntaxError && error.statusCode === 400) return ValidationError.field('body', 'Body is not valid JSON');
  if (isDatabaseDown(error)) return new UnavailableError('The database is unavailable; try again shortly');
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError(error.statusCode === 400 ? 422 : error.statusCode, 'validation_failed', error.message, {});
  }
  return undefined;
}

export function errorBody(error: AppError) {
  return { errors: [{ code: error.statusCode, message: error.message, details: error.details, type: error.type }] };
}

/** Parsed bodies and queries nested deeper than this are refused before anything walks them. */
const MAX_INPUT_DEPTH = 32;

/**
 * What is wrong with a parsed body or query before validation, named as sent
 * (`deal[title]`): a string holding a NUL character (PostgreSQL cannot store
 * one in text or JSON), a `__proto__` or `constructor` key (prototype
 * pollution in whatever merges the object later; a `constructor` only with a
 * `prototype` inside, as secure-json-parse does), or nesting beyond MAX_INPUT_DEPTH (JSON.parse accepts
 * any depth; a recursive walk of it would overflow the stack). Walks with an
 * explicit stack, in document order.
 */
function inputProblem(input: unknown): ValidationError | undefined {
  const stack: { value: unknown; name: string; depth: number }[] = [{ value: input, name: '', depth: 0 }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const { value, name, depth } = next;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return ValidationError.field(name || 'body', 'Must not contain NUL characters');
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const ctor = (value as { constructor?: unknown }).constructor;
    const poisoned = Object.hasOwn(value, '__proto__')
      ? '__proto__'
      : Object.hasOwn(value, 'constructor') && typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')
        ? 'constructor'
        : undefined;
    if (poisoned) return ValidationError.field(name ? `${name}[${poisoned}]` : poisoned, `A key named ${poisoned} is not accepted`);
    if (depth >= MAX_INPUT_DEPTH) return ValidationError.field(name || 'body', `Must nest at most ${MAX_INPUT_DEPTH} levels`);
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i]!;
      stack.push({ value: inner, name: name ? `${name}[${key}]` : key, depth: depth + 1 });
    }
  }
  return undefined;
}

export function registerErrorHandling(app: FastifyInstance): void {
  // JSON.parse keeps __proto__ as a plain own key (no pollution); inputProblem then refuses it by name.
  // Fastify's own parser would refuse it too, but as "not valid JSON", which it is.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
    }
  });

  // Refused up front, naming the input, instead of failing at the insert or overflowing a recursive walk.
  app.addHook('preValidation', async (request) => {
    const problem = inputProblem(request.query) ?? (Buffer.isBuffer(request.body) ? undefined : inputProblem(request.body));
    if (problem) throw problem;
  });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let mapped = bodyReadError(error, request) ?? toAppError(error);
    if (mapped?.statusCode === 503) {
      request.log.warn({ err: error }, mapped.message);
      mapped = new AppError(503, mapped.type, mapped.message, { ...mapped.details, requestId: request.id }, mapped.headers);
    } else if (!mapped || mapped.statusCode >= 500) {
      request.log.error({ err: error }, 'unhandled error');
      mapped = new AppError(500, 'server_error', 'Something went wrong on our side', { requestId: request.id });
    }
    void reply.code(mapped.statusCode).headers(mapped.headers).send(errorBody(mapped));
  });

  // A path that exists under other methods is a 405 with Allow, not a 404.
  const routes: { method: string; pattern: RegExp; static: boolean }[] = [];
  app.addHook('onRoute', (route) => {
    const pattern = new RegExp(`^${route.url.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*')}$`);
    for (const method of [route.method].flat()) routes.push({ method, pattern, static: !/[:*]/.test(route.url) });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    // As the router does: a static path wins over a parametric one that also matches it.
    const matching = routes.filter((route) => route.pattern.test(path));
    const staticOnes = matching.filter((route) => route.static);
    const allowed = [...new Set((staticOnes.length ? staticOnes : matching).map((route) => route.method))].sort();
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      const error = new AppError(405, 'method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}`, { allow: allowed });
      void reply.code(405).header('Allow', allowed.join(', ')).send(errorBody(error));
      return;
    }
    void reply.code(404).send(errorBody(new AppError(404, 'not_found', `Route ${request.method} ${path} not found`)));
  });
}
