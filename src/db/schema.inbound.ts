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
  /** Where created deals start (else the pipeline's first stage) and who owns them (else nobody). */
  default_stage_id: number | null;
  default_owner_id: number | null;
  /** Target deal field → dot path in the sender's JSON (see domain/inbound/field-map.ts). */
  field_map: ColumnType<Record<string, string>, string | undefined, string>;
}

export type ReceiveOutcome = 'created' | 'updated' | 'replayed' | 'rejected';

/** One row per request that reached a known source; never holds a secret or a body. */
export interface InboundReceiveLogTable {
  id: Generated<number>;
  source_id: string;
  received_at: Generated<Date>;
  status: number;
  outcome: ReceiveOutcome;
  error: string | null;
  deal_id: number | null;
}

/**
 * Replay safety: one row per (source, key), where key is `header:<Idempotency-Key
 * or webhook-id>` or `body:<sha256 of the raw body>`. The row is claimed at the
 * start of the receive transaction and filled with the answer before commit.
 */
export interface InboundIdempotencyTable {
  source_id: string;
  key: string;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  status: number | null;
  response: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
}

export interface InboundTables {
  inbound_sources: InboundSourcesTable;
  inbound_receive_log: InboundReceiveLogTable;
  inbound_idempotency: InboundIdempotencyTable;
}
