/** Tables of outbound event delivery (webhook subscriptions, deliveries, attempts). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface OutboundTables {}
