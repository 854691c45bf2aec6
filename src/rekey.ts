import { appKeys, loadConfigOrExit } from './config.js';
import { resealSecrets } from './crypto/key-check.js';
import { createDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { createLogger } from './logger.js';

/**
 * `npm run rekey`: re-seals every stored secret under APP_KEY, opening each with
 * APP_KEY or APP_KEY_PREVIOUS. Run it once during a rotation; afterwards the
 * old key can be dropped (README: "Rotating APP_KEY").
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  if (!config.DATABASE_URL || !config.APP_KEY || !config.APP_KEY_PREVIOUS) {
    process.stderr.write('Invalid configuration: APP_KEY_PREVIOUS: npm run rekey needs DATABASE_URL, APP_KEY (new) and APP_KEY_PREVIOUS (old)\n');
    process.exit(1);
  }
  const logger = createLogger(config.LOG_LEVEL);
  const database = createDatabase(config.DATABASE_URL, { max: 2 });
  try {
    await migrateToLatest(database, logger);
    const count = await resealSecrets(database.db, appKeys(config));
    process.stdout.write(`Re-sealed ${count} stored secrets under APP_KEY; APP_KEY_PREVIOUS can now be removed.\n`);
  } finally {
    await database.destroy();
  }
}

await main();
