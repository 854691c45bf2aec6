import type { Db } from '../../../db/database.js';
import type { BuiltinAuth } from '../auth.js';

/** What the built-in host's routes need: its tables, its auth (to forget cached logins) and the public origin. */
export interface BuiltinRouteDeps {
  db: Db;
  auth: BuiltinAuth;
  baseUrl: string;
}
