/**
 * A webhook receiver for the deal pipeline service's outbound events.
 *
 *   WEBHOOK_SECRET=whsec_... PORT=8080 npm run receiver
 *
 * Verifies every delivery (Standard Webhooks `v1`, or the `mautic,` entry),
 * answers 401 to anything else, skips an event it has already seen (delivery
 * is at least once), and logs each event as one JSON line.
 */
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { verifyDelivery, type VerifiedDelivery } from '../src/webhooks.js';

export interface DealEvent {
  id: string;
  event: string;
  timestamp: string;
  sequence?: number;
  deal?: { id: number; title: string; status: string; stage?: { id: number; name: string } };
  [key: string]: unknown;
}

export interface ReceiverOptions {
  secret: string;
  /** Called once per new verified event (default: a JSON line on stdout). */
  onEvent?: (delivery: VerifiedDelivery<DealEvent>) => void | Promise<void>;
  /** Called for each refused request, with the reason (default: a line on stderr). */
  onRejected?: (reason: string) => void;
}

export function createReceiver(options: ReceiverOptions): http.Server {
  const seen = new Set<string>();
  const onEvent =
    options.onEvent ??
    (({ event, scheme }) =>
      console.log(JSON.stringify({ received: event.event, id: event.id, deal: event.deal?.id, sequence: event.sequence, verifiedBy: scheme })));
  const onRejected = options.onRejected ?? ((reason) => console.error(`refused a delivery: ${reason}`));
  return http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        let delivery: VerifiedDelivery<DealEvent>;
        try {
          // The raw bytes, exactly as sent: the signature covers them, not re-serialized JSON.
          delivery = verifyDelivery<DealEvent>(options.secret, Buffer.concat(chunks), request.headers);
        } catch (error) {
          onRejected((error as Error).message);
          response.writeHead(401).end();
          return;
        }
        // De-duplicate on the event id (the same on every retry and redelivery).
        if (!seen.has(delivery.id)) {
          seen.add(delivery.id);
          await onEvent(delivery);
        }
        response.writeHead(204).end();
      })().catch((error: unknown) => {
        console.error(error);
        // Any non-2xx makes the service retry later.
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) {
    console.error('Set WEBHOOK_SECRET to the whsec_... secret shown when the webhook was created.');
    process.exit(1);
  }
  const port = Number(process.env.PORT ?? 8080);
  createReceiver({ secret }).listen(port, () => console.log(`listening on http://127.0.0.1:${port}/`));
}
