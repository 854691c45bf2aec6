/**
 * The one error model. Domain code throws these; the error handler turns them
 * (and Fastify's, zod's and PostgreSQL's errors) into the contract's error body:
 * {"errors":[{"code","message","details","type"}]}.
 */

export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly type: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  constructor(details: FieldErrors, message?: string) {
    const [first] = Object.entries(details);
    super(422, 'validation_failed', message ?? (first ? `${first[0]}: ${first[1][0]}` : 'Validation failed'), details);
  }

  /** One bad input, named as the client sent it (`deal[title]`, `stage_id`, `ids[3]`). */
  static field(name: string, message: string): ValidationError {
    return new ValidationError({ [name]: [message] });
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'Authentication required') {
    super(401, 'unauthorized', message, {}, { 'WWW-Authenticate': 'Basic realm="service"' });
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'You do not have permission to do this') {
    super(403, 'forbidden', message);
  }
}

export class InvalidSignatureError extends AppError {
  constructor(message = 'Missing or invalid signature') {
    super(403, 'invalid_signature', message);
  }
}

export class NotFoundError extends AppError {
  constructor(what = 'Resource') {
    super(404, 'not_found', `${what} not found`);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(409, 'conflict', message, details);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super(413, 'payload_too_large', `Request body is larger than ${limitBytes} bytes`, { limit: limitBytes });
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(contentType: string | undefined) {
    super(
      415,
      'unsupported_media_type',
      `Unsupported content type ${contentType ?? '(none)'}: send application/json or application/x-www-form-urlencoded`,
    );
  }
}

export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(429, 'rate_limited', 'Too many requests', { retryAfter: retryAfterSeconds }, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

/** Something this service depends on (the database, a remote host) is down or too slow: try again after a while. */
export class UnavailableError extends AppError {
  constructor(message: string, retryAfterSeconds = 5, type = 'unavailable') {
    super(503, type, message, { retryAfter: retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }
}
