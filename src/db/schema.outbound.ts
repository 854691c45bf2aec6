import type { ColumnType, Generated } from 'kysely';

/** Tables of outbound event delivery (webhook subscriptions, deliveries, attempts). */

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface WebhookSubscriptionsTable {
  id: Generated<number>;
  name: string;
  url: string;
  events: ColumnType<string[], string[], string[]>;
  /** AES-256-GCM with APP_KEY; never the plaintext. */
  secret_encrypted: string;
  /** Kept for a while after a rotation: both signatures are sent until it expires. */
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: NullableTimestamp;
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  disabled_at: NullableTimestamp;
  /** First failure since the last success; five days of it disables the subscription. */
  failing_since: NullableTimestamp;
  created_by_id: number | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  /** null in forward mode: the delivery goes to HOST_WEBHOOK_URL. */
  subscription_id: number | null;
  event_id: string;
  event: string;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempt_count: Generated<number>;
  /** Start of the current retry cycle (creation, or a manual redelivery). */
  cycle_started_at: Timestamp;
  next_attempt_at: NullableTimestamp;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempted_at: Timestamp;
  status_code: number | null;
  duration_ms: number;
  response_body: string | null;
  error: string | null;
}

export interface OutboundTables {
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
