import pino, { type Logger } from 'pino';
import type { Config } from './config.js';

/** Secrets that must never reach a log line, wherever they appear. */
export const REDACT = [
  'req.headers.authorization',
  'req.headers["x-service-signature"]',
  'req.headers.cookie',
  'password',
  'secret',
  'client_secret',
  'access_token',
  '*.password',
  '*.secret',
  '*.client_secret',
  '*.access_token',
  'password_hash',
  '*.password_hash',
  'secret_encrypted',
  '*.secret_encrypted',
];

/** The process logger of `npm start` and `npm run worker`: JSON lines, secrets redacted. */
export function createLogger(level: Config['LOG_LEVEL'], destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' } }, destination);
}
