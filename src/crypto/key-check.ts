import type { Db, Executor } from '../db/database.js';
import { open, seal, WrongKeyError } from './secret-box.js';

/**
 * APP_KEY against the stored secrets, at start-up. The database keeps a known
 * text sealed with the key (a key check value, never the key): if APP_KEY (or,
 * during a rotation, APP_KEY_PREVIOUS) opens it, every secret sealed since
 * opens too. A database from before the check was added is probed with one
 * stored secret of each kind instead, then given its check value.
 */

const CHECK_TEXT = 'deal-pipeline-service key check v1';

export const WRONG_KEY_MESSAGE =
  'Invalid configuration: APP_KEY: does not open the stored secrets (they were sealed with another key); ' +
  'start with that key, or set it as APP_KEY_PREVIOUS and run npm run rekey';

export class AppKeyMismatchError extends Error {
  constructor() {
    super(WRONG_KEY_MESSAGE);
  }
}

async function sampleSecrets(db: Executor): Promise<string[]> {
  const [source, subscription] = await Promise.all([
    db.selectFrom('inbound_sources').select('secret_encrypted as sealed').limit(1).executeTakeFirst(),
    db.selectFrom('webhook_subscriptions').select('secret_encrypted as sealed').limit(1).executeTakeFirst(),
  ]);
  return [source?.sealed, subscription?.sealed].filter((sealed) => sealed !== undefined);
}

/** Throws AppKeyMismatchError when the keys cannot open what is stored; records the check value on first use. */
export async function verifyAppKey(db: Db, keys: readonly Buffer[]): Promise<void> {
  const row = await db.selectFrom('app_key_check').select('check_value').executeTakeFirst();
  try {
    if (row) {
      if (open(keys, row.check_value) !== CHECK_TEXT) throw new AppKeyMismatchError();
      return;
    }
    for (const sealed of await sampleSecrets(db)) open(keys, sealed);
  } catch (error) {
    if (error instanceof WrongKeyError) throw new AppKeyMismatchError();
    throw error;
  }
  await writeCheckValue(db, keys[0]!);
}

export async function writeCheckValue(db: Executor, key: Buffer): Promise<void> {
  await db
    .insertInto('app_key_check')
    .values({ check_value: seal(key, CHECK_TEXT) })
    .onConflict((oc) => oc.column('id').doUpdateSet({ check_value: (eb) => eb.ref('excluded.check_value'), updated_at: new Date() }))
    .execute();
}

/**
 * Key rotation's middle step: every stored secret opened with either key and
 * sealed again with the first (the new APP_KEY), and the check value with it,
 * in one transaction. Answers how many secrets were re-sealed.
 */
export async function resealSecrets(db: Db, keys: readonly Buffer[]): Promise<number> {
  const [key] = keys;
  if (!key) throw new Error('APP_KEY is required');
  const reseal = (sealed: string | null) => (sealed === null ? null : seal(key, open(keys, sealed)));
  return db.transaction().execute(async (trx) => {
    let count = 0;
    for (const table of ['inbound_sources', 'webhook_subscriptions'] as const) {
      const rows = await trx.selectFrom(table).select(['id', 'secret_encrypted', 'previous_secret_encrypted']).forUpdate().execute();
      for (const row of rows) {
        await trx
          .updateTable(table)
          .set({ secret_encrypted: reseal(row.secret_encrypted)!, previous_secret_encrypted: reseal(row.previous_secret_encrypted) })
          .where('id', '=', row.id as never)
          .execute();
        count += row.previous_secret_encrypted === null ? 1 : 2;
      }
    }
    await writeCheckValue(trx, key);
    return count;
  });
}
