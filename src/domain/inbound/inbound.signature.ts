import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Signing of inbound receives: `X-Service-Signature: sha256=<hex HMAC-SHA256 of
 * the raw body bytes>`, keyed with the source secret's characters exactly as shown
 * to the user (64 lowercase hex characters, used as text, not decoded).
 */

export const SIGNATURE_HEADER = 'x-service-signature';

/** 32 random bytes as 64 lowercase hex characters. */
export function generateSecret(): string {
  return randomBytes(32).toString('hex');
}

export function hmacSha256(secret: string, body: Buffer): Buffer {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest();
}

/** The digest a header carries, or undefined when the header is absent or malformed. Hex case is irrelevant to the bytes. */
export function parseSignatureHeader(header: string | string[] | undefined): Buffer | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  return match ? Buffer.from(match[1]!, 'hex') : undefined;
}

/** True when the digest matches the body under any of the secrets; every candidate is compared in constant time. */
export function signatureMatches(digest: Buffer, body: Buffer, secrets: readonly string[]): boolean {
  let matched = false;
  for (const secret of secrets) {
    if (timingSafeEqual(hmacSha256(secret, body), digest)) matched = true;
  }
  return matched;
}

/** Identifies a byte-identical body for replay safety. */
export function bodyHash(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}
