export { allDeals, ApiError, createDealClient, dealPages, retryAfterMs, retryingFetch } from './client.js';
export type { Credentials, DealClient, DealClientOptions, DealListPage, DealListQuery, DealSummary, ErrorBody, RetryOptions } from './client.js';
export { verifyDelivery, WebhookVerificationError } from './webhooks.js';
export type { SignatureScheme, VerifiedDelivery, VerifyOptions } from './webhooks.js';
export type { components, operations, paths } from './schema.js';
