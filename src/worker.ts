import closeWithGrace from 'close-with-grace';
import { appKeys, loadConfigOrExit } from './config.js';
import { AppKeyMismatchError, verifyAppKey } from './crypto/key-check.js';
import { createDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { startWorker } from './events/worker.js';
import { createBuiltinHost } from './host/builtin/index.js';
import { createMauticHost } from './host/mautic/index.js';
import { createLogger } from './logger.js';

/**
 * `npm run worker`: the delivery worker alone, against DATABASE_URL. Run as many
 * as needed, on as many machines, beside `npm start` (which may then use
 * WORKER=off); they share the queue and never run one job twice at once.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  if (!config.DATABASE_URL) {
    process.stderr.write('Invalid configuration: DATABASE_URL: required by npm run worker\n');
    process.exit(1);
  }
  const logger = createLogger(config.LOG_LEVEL);

  // Idempotent; lets a worker start first on a fresh database.
  const migrations = createDatabase(config.DATABASE_URL, { max: 2 });
  await migrateToLatest(migrations, logger);
  try {
    if (config.APP_KEY) await verifyAppKey(migrations.db, appKeys(config));
  } catch (error) {
    if (!(error instanceof AppKeyMismatchError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  } finally {
    await migrations.destroy();
  }

  // The host is picked as in server.ts: queued inbound receives find or create their contacts there.
  const hostDatabase = createDatabase(config.DATABASE_URL, { max: 2 });
  const host =
    config.HOST_PLATFORM === 'mautic' ? createMauticHost({ db: hostDatabase.db, config, logger }) : createBuiltinHost({ db: hostDatabase.db, config });
  // A database outage stops graphile-worker's runner; a fresh one starts when the database is back.
  const worker = await startWorker({
    databaseUrl: config.DATABASE_URL,
    config,
    logger,
    dispatch: host.dispatch,
    inbound: { contacts: host.contacts, currency: config.DEFAULT_CURRENCY },
    restartOnError: true,
  });

  closeWithGrace({ delay: 30_000, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'worker shutting down after an error');
    else logger.info({ signal }, 'worker shutting down');
    await worker.stop(); // finishes the deliveries in hand, hands back the rest
    await host.close?.();
    await hostDatabase.destroy();
  });
}

await main();
