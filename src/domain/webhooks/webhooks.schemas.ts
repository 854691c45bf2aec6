import { z } from 'zod';
import { EVENT_NAMES } from '../../events/events.js';
import { isValidSecret } from '../../events/signing.js';
import { TEST_EVENT } from '../../events/test-event.js';
import { formList } from '../../http/form.js';
import { bool, isoDate, nullable, pageQuery, text } from '../../http/schemas.js';

/** Body and query formats of webhook subscriptions, shared by the API routes and the settings pages. */

const url = z
  .string()
  .trim()
  .max(2048, 'Must be at most 2048 characters')
  .pipe(z.url({ protocol: /^https?$/, message: 'Must be an http or https URL' }));
/** `events=` or a lone `events[]=` from a form mean none, and are refused as such. */
const events = formList(z.enum(EVENT_NAMES, { message: `Must be one of ${EVENT_NAMES.join(', ')}` })).refine(
  (names) => names.length > 0,
  'Select at least one event',
);
const secret = nullable(
  z.string().trim().refine(isValidSecret, 'Must be whsec_ followed by the base64 of 24 to 64 random bytes'),
).optional();

export const webhookBody = z.object({ name: text(1, 255), url, events, secret, enabled: bool.optional() });

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const deliveryQuery = pageQuery.extend({
  status: z.enum(DELIVERY_STATUSES).optional(),
  event: z.enum([...EVENT_NAMES, TEST_EVENT]).optional(),
  since: z
    .union([z.iso.datetime({ offset: true }), isoDate], { message: 'Must be an ISO 8601 timestamp or a YYYY-MM-DD date' })
    .transform((value) => new Date(value))
    .optional(),
});
