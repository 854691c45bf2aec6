import type { Db } from '../../../db/database.js';
import type { BuiltinAuth } from '../auth.js';

/** What the built-in host's routes need: its tables, its auth and the public origin. */
export interface BuiltinRouteDeps {
  db: Db;
  auth: BuiltinAuth;
  baseUrl: string;
  /** After users, roles or credentials change: every process drops its cached logins. */
  forgetLogins(): void;
}
