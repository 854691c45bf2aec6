import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export { WebhookVerificationError };

/** Which entry of `webhook-signature` vouched for a delivery. */
export type SignatureScheme = 'v1' | 'mautic';

export interface VerifyOptions {
  /**
   * Entries accepted (default both). `v1` is Standard Webhooks: the HMAC of
   * `id.timestamp.body` under the decoded `whsec_` key, with the timestamp no
   * more than 5 minutes off. `mautic` is the HMAC of the body alone under the
   * secret string, as Mautic receivers compute it: it does not cover the id or
   * the timestamp, so prefer `v1` where you can.
   */
  accept?: readonly SignatureScheme[];
}

export interface VerifiedDelivery<Event = Record<string, unknown>> {
  /** The event payload (contract section 5): id, event, timestamp, sequence, deal, ... */
  event: Event;
  /** The `webhook-id` header: the event id, the same on every retry and redelivery. */
  id: string;
  scheme: SignatureScheme;
}

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    // A field repeated by a proxy is one list: Standard Webhooks separates entries with spaces.
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

/** The `mautic,<base64 HMAC-SHA256 of the body>` entry, keyed with the secret string exactly as shown. */
function mauticMatches(secret: string, body: string, signatures: string): boolean {
  const expected = createHmac('sha256', secret).update(body).digest();
  return signatures.split(' ').some((entry) => {
    const comma = entry.indexOf(',');
    if (entry.slice(0, comma) !== 'mautic') return false;
    const given = Buffer.from(entry.slice(comma + 1), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/**
 * Verifies one delivery of the service's outbound events: the raw body (the
 * exact bytes, before any JSON parsing) and the request headers. Answers the
 * parsed event and the entry that matched; throws WebhookVerificationError
 * when none does. The `v1` check is the `standardwebhooks` library's own.
 */
export function verifyDelivery<Event = Record<string, unknown>>(
  secret: string,
  body: string | Buffer,
  headers: Headers,
  options: VerifyOptions = {},
): VerifiedDelivery<Event> {
  const accept = options.accept ?? ['v1', 'mautic'];
  const raw = typeof body === 'string' ? body : body.toString('utf8');
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !signatures) throw new WebhookVerificationError('Missing required headers');
  let failure: unknown = new WebhookVerificationError('No matching signature found');
  if (accept.includes('v1') && timestamp) {
    try {
      const event = new Webhook(secret).verify(raw, { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures });
      return { event: event as Event, id, scheme: 'v1' };
    } catch (error) {
      failure = error;
    }
  }
  if (accept.includes('mautic') && mauticMatches(secret, raw, signatures)) {
    return { event: JSON.parse(raw) as Event, id, scheme: 'mautic' };
  }
  throw failure;
}
