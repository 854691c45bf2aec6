import { createHmac, randomBytes } from 'node:crypto';

/**
 * Outbound signatures, in the one `webhook-signature` header (header names are
 * case-insensitive, so the contract's Standard Webhooks `webhook-signature` and
 * Mautic-style `Webhook-Signature` are the same field). Its value is a
 * space-separated list, as Standard Webhooks (https://www.standardwebhooks.com)
 * defines it:
 * - `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the
 *   base64-decoded part of a `whsec_` secret; one per secret while a rotated
 *   secret is still valid;
 * - `mautic,<base64 HMAC-SHA256 of the body>`, keyed with the current secret
 *   string exactly as shown (what Mautic receivers compute).
 * Standard Webhooks verifiers skip entries of versions they do not know, so a
 * reference library verifies the header as sent; one field line also survives
 * servers and proxies that join repeated fields.
 */

const SECRET_PREFIX = 'whsec_';
const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

/** A new subscription secret: `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** `whsec_` + canonical base64 of 24 to 64 bytes. */
export function isValidSecret(secret: string): boolean {
  if (!SECRET.test(secret)) return false;
  const encoded = secret.slice(SECRET_PREFIX.length);
  const bytes = Buffer.from(encoded, 'base64');
  return bytes.length >= 24 && bytes.length <= 64 && bytes.toString('base64') === encoded;
}

/** The HMAC key of a secret: decoded `whsec_` bytes, or the string's bytes for a host secret of another form. */
function signingKey(secret: string): Buffer {
  return secret.startsWith(SECRET_PREFIX) ? Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

export type SignedHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  /** `v1,<sig>[ v1,<sig>] mautic,<sig>` */
  'webhook-signature': string;
};

/**
 * Headers for one attempt. `secrets[0]` is the current secret; any others are
 * still-valid previous ones. The timestamp is the attempt's own (seconds).
 */
export function signedHeaders(secrets: readonly string[], id: string, timestampSeconds: number, body: string): SignedHeaders {
  const content = `${id}.${timestampSeconds}.${body}`;
  const standard = secrets.map((secret) => `v1,${createHmac('sha256', signingKey(secret)).update(content).digest('base64')}`);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': [...standard, `mautic,${createHmac('sha256', secrets[0]!).update(body).digest('base64')}`].join(' '),
  };
}
