import type { ColumnType, Generated } from 'kysely';

/** Tables of inbound webhook sources (sources, receive log, idempotency). */
export interface InboundSourcesTable {
  id: string;
  name: string;
  pipeline_id: number;
  /** AES-256-GCM with APP_KEY; never the plaintext. */
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | string | null;
  enabled: Generated<boolean>;
  created_by_id: number | null;
  created_at: Generated<Date>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  last_received_at: Date | string | null;
}

export interface InboundTables {
  inbound_sources: InboundSourcesTable;
}
