import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets at rest: AES-256-GCM under APP_KEY. Stored as
 * `v1.<iv>.<tag>.<ciphertext>` (base64url), so a database dump alone reveals nothing.
 */
export function seal(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
}

/** Thrown when no key given can open a sealed secret: APP_KEY is not the key it was sealed with. */
export class WrongKeyError extends Error {
  constructor() {
    super('the sealed secret does not open with APP_KEY (nor APP_KEY_PREVIOUS)');
  }
}

/**
 * Opens with the first key that fits: APP_KEY, then, during a rotation,
 * APP_KEY_PREVIOUS (see `npm run rekey`).
 */
export function open(keys: Buffer | readonly Buffer[], sealed: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('unrecognised sealed secret');
  for (const key of [keys].flat()) {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      // not this key
    }
  }
  throw new WrongKeyError();
}
