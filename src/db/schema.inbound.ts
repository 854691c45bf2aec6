/** Tables of inbound webhook sources (sources, receive log, idempotency). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface InboundTables {}
