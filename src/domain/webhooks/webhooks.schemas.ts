import { z } from 'zod';
import { EVENT_NAMES } from '../../events/events.js';
import { isValidSecret } from '../../events/signing.js';
import { TEST_EVENT } from '../../events/test-event.js';
import { formList } from '../../http/form.js';
import { bool, isoDate, nullable, pageQuery, text } from '../../http/schemas.js';

/** Body and query formats of webhook subscriptions, shared by the API routes and the settings pages. */

// One string schema (not a pipe), so the document publishes the URL format with the length.
const url = z.string().trim().max(2048, 'Must be at most 2048 characters').url({ protocol: /^https?$/, message: 'Must be an http or https URL' });
/** `events=` or a lone `events[]=` from a form mean none, and are refused as such. */
const events = formList(z.enum(EVENT_NAMES, { message: `Must be one of ${EVENT_NAMES.join(', ')}` }), { min: [1, 'Select at least one event'] });
const SECRET_MESSAGE = 'Must be whsec_ followed by the base64 of 24 to 64 random bytes';
/** whsec_ + 32 to 88 base64 characters (24 to 64 bytes), published as the pattern. */
const SECRET_SHAPE = /^whsec_(?=[A-Za-z0-9+/=]{32,88}$)[A-Za-z0-9+/]+={0,2}$/;
const secret = nullable(
  z
    .string()
    .trim()
    .regex(SECRET_SHAPE, SECRET_MESSAGE)
    // The bytes' count and canonical base64, once the shape is right (one message per value).
    .refine((value) => !SECRET_SHAPE.test(value) || isValidSecret(value), SECRET_MESSAGE),
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
