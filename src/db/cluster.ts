import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from './database.js';
import { sql } from 'kysely';

/**
 * The service processes sharing one database, as one service: a message bus on
 * PostgreSQL's LISTEN/NOTIFY (cache invalidations, failed logins) and who is
 * alive (each process announces itself every few seconds), so per-process
 * limits can take their share of a limit meant for the whole service.
 * Delivery is best effort and in commit order; a process that was not
 * listening misses what was said meanwhile, which every user of the bus
 * tolerates (caches also expire; a failed-login count only errs towards allowing).
 */

export interface Cluster {
  readonly processId: string;
  /** Live service processes, this one included (at least 1). */
  size(): number;
  /** Tells every process, this one included. */
  publish(topic: string, data?: unknown): void;
  /** `fromSelf`: this process published it (and has already acted on it, if it needed to). */
  on(topic: string, handler: (data: unknown, fromSelf: boolean) => void): void;
  close(): Promise<void>;
}

type Handler = (data: unknown, fromSelf: boolean) => void;

function handlersFor() {
  const handlers = new Map<string, Handler[]>();
  return {
    on(topic: string, handler: Handler) {
      handlers.set(topic, [...(handlers.get(topic) ?? []), handler]);
    },
    deliver(topic: string, data: unknown, fromSelf: boolean) {
      for (const handler of handlers.get(topic) ?? []) handler(data, fromSelf);
    },
  };
}

/** One process alone (tests, and anything built without a database URL): messages go straight to its own handlers. */
export function localCluster(): Cluster {
  const { on, deliver } = handlersFor();
  return {
    processId: randomUUID(),
    size: () => 1,
    publish: (topic, data) => queueMicrotask(() => deliver(topic, data, true)),
    on,
    close: async () => {},
  };
}

const CHANNEL = 'deal_pipeline_cluster';
const PRESENCE_MS = 3_000;
const GONE_AFTER_MS = 10_000;

export async function joinCluster(options: { databaseUrl: string; db: Db; logger: Logger }): Promise<Cluster> {
  const { db } = options;
  const logger = options.logger.child({ component: 'cluster' });
  const processId = randomUUID();
  const { on, deliver } = handlersFor();
  const peers = new Map<string, number>();
  let client: pg.Client | undefined;
  let closed = false;

  async function listen(): Promise<void> {
    const next = new pg.Client({ connectionString: options.databaseUrl });
    next.on('notification', (message) => {
      try {
        const { from, topic, data } = JSON.parse(message.payload ?? '{}') as { from: string; topic: string; data: unknown };
        if (from !== processId) peers.set(from, Date.now());
        if (topic === 'leave') peers.delete(from);
        else if (topic !== 'presence') deliver(topic, data, from === processId);
      } catch (err) {
        logger.warn({ err }, 'unreadable cluster message');
      }
    });
    next.on('error', (err) => {
      logger.warn({ err }, 'cluster listener lost its connection; reconnecting');
      void next.end().catch(() => undefined);
      if (client === next) client = undefined;
      if (!closed) setTimeout(() => void listen().catch(() => undefined), 1000).unref();
    });
    await next.connect();
    await next.query(`LISTEN ${CHANNEL}`);
    client = next;
  }

  const send = (topic: string, data?: unknown) =>
    sql`select pg_notify(${CHANNEL}, ${JSON.stringify({ from: processId, topic, data })})`.execute(db);

  await listen();
  const presence = setInterval(() => {
    if (!client && !closed) void listen().catch(() => undefined);
    send('presence').catch((err: unknown) => logger.debug({ err }, 'presence not sent'));
  }, PRESENCE_MS);
  presence.unref();
  await send('presence');

  return {
    processId,
    size() {
      const now = Date.now();
      for (const [id, seen] of peers) if (now - seen > GONE_AFTER_MS) peers.delete(id);
      return 1 + peers.size;
    },
    publish(topic, data) {
      // Our own handlers hear it through the notification too; when the database is down, at least they do.
      send(topic, data).catch((err: unknown) => {
        logger.warn({ err, topic }, 'cluster message not sent');
        deliver(topic, data, true);
      });
    },
    on,
    async close() {
      closed = true;
      clearInterval(presence);
      await send('leave').catch(() => undefined);
      await client?.end().catch(() => undefined);
    },
  };
}
