import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { InboundTables } from './schema.inbound.js';
import type { OutboundTables } from './schema.outbound.js';

/**
 * Table types. Columns are snake_case; the JSON API maps them in one place per
 * resource (the `to...Json` functions next to each repository).
 *
 * numeric comes back from pg as a string and stays one until it is formatted for
 * JSON; date columns are returned as 'YYYY-MM-DD' strings (see db/database.ts).
 */

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type DateOnly = ColumnType<string, string, string>;
type Numeric = ColumnType<string, string | number | undefined, string | number>;

export interface RolesTable {
  id: Generated<number>;
  name: string;
  is_admin: Generated<boolean>;
  permissions: ColumnType<string[], string[] | undefined, string[]>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface UsersTable {
  id: Generated<number>;
  username: string;
  /** null for a user mirrored from a remote host (it logs in there). */
  password_hash: string | null;
  name: string;
  email: string | null;
  /** null for a mirrored user whose host role maps to none of ours. */
  role_id: number | null;
  is_active: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
  /** When a mirrored user was last read from the host; null for the built-in host's own users. */
  synced_at: Date | null;
  /** Still on a password someone else chose (the first-run admin's, or a reset): the pages ask for a new one. */
  must_change_password: Generated<boolean>;
}

export interface ContactsTable {
  id: Generated<number>;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
  /** When a mirrored contact was last read from the host; null for the built-in host's own contacts. */
  synced_at: Date | null;
  /** Set when the host deleted (or merged away) the contact: deals keep naming it, marked deleted. */
  deleted_at: Date | null;
  merged_into_id: number | null;
}

export interface ApiCredentialsTable {
  id: Generated<number>;
  name: string;
  user_id: number;
  client_id: string;
  client_secret_hash: string;
  created_at: Generated<Date>;
  last_used_at: Date | null;
}

export interface OauthTokensTable {
  token_hash: string;
  credential_id: number;
  user_id: number;
  expires_at: Timestamp;
  created_at: Generated<Date>;
}

export interface HostAssertionJtisTable {
  jti: string;
  expires_at: Date;
}

export interface WorkerHeartbeatsTable {
  worker_id: string;
  beat_at: Timestamp;
}

export interface AppKeyCheckTable {
  id: Generated<boolean>;
  check_value: string;
  updated_at: Generated<Date>;
}

export interface PipelinesTable {
  id: Generated<number>;
  name: string;
  is_default: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface PipelineRolesTable {
  pipeline_id: number;
  role_id: number;
}

export type StageType = 'open' | 'won' | 'lost';

export interface StagesTable {
  id: Generated<number>;
  pipeline_id: number;
  name: string;
  type: StageType;
  position: number;
  probability: Generated<number>;
  /** #rrggbb, or null for the default look. */
  color: Generated<string | null>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface DealsTable {
  id: Generated<number>;
  title: string;
  amount: Numeric;
  currency: string;
  pipeline_id: number;
  stage_id: number;
  status: StageType;
  close_date: DateOnly | null;
  owner_id: number | null;
  created_by_id: number | null;
  custom_fields: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  source_id: string | null;
  external_id: string | null;
  lost_reason: string | null;
  stage_changed_at: Timestamp;
  won_at: Date | string | null;
  lost_at: Date | string | null;
  event_sequence: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface DealContactsTable {
  deal_id: number;
  contact_id: number;
  role: string | null;
  is_primary: Generated<boolean>;
  created_at: Generated<Date>;
}

export interface DealNotesTable {
  id: Generated<number>;
  deal_id: number;
  body: string;
  author_id: number | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface DealTasksTable {
  id: Generated<number>;
  deal_id: number;
  title: string;
  due_date: DateOnly | null;
  assignee_id: number | null;
  is_completed: Generated<boolean>;
  completed_at: Date | string | null;
  created_by_id: number | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface DealStageHistoryTable {
  id: Generated<number>;
  deal_id: number;
  from_stage_id: number | null;
  to_stage_id: number | null;
  changed_by_id: number | null;
  changed_by_name: string;
  changed_at: Generated<Date>;
}

export interface EventOutboxTable {
  id: string;
  event: string;
  deal_id: number | null;
  sequence: number | null;
  payload: JSONColumnType<Record<string, unknown>, string, string>;
  created_at: Generated<Date>;
}

/** Browser sessions of the sales pages (src/http/session.ts). */
export interface SessionRights {
  roleId: number;
  isAdmin: boolean;
  permissions: string[];
}

export interface PageSessionsTable {
  token_hash: string;
  user_id: number;
  /** The actor's rights at login ({roleId, isAdmin, permissions}), used when the user has no local role. */
  rights: ColumnType<SessionRights, string, string>;
  created_at: Generated<Date>;
  expires_at: Date;
}

export interface DB extends OutboundTables, InboundTables {
  roles: RolesTable;
  users: UsersTable;
  contacts: ContactsTable;
  host_assertion_jtis: HostAssertionJtisTable;
  worker_heartbeats: WorkerHeartbeatsTable;
  app_key_check: AppKeyCheckTable;
  api_credentials: ApiCredentialsTable;
  oauth_tokens: OauthTokensTable;
  pipelines: PipelinesTable;
  pipeline_roles: PipelineRolesTable;
  stages: StagesTable;
  deals: DealsTable;
  deal_contacts: DealContactsTable;
  deal_notes: DealNotesTable;
  deal_tasks: DealTasksTable;
  deal_stage_history: DealStageHistoryTable;
  event_outbox: EventOutboxTable;
  page_sessions: PageSessionsTable;
}
