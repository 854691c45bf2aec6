import type { Migration } from 'kysely';
import * as core from './20261121_2100_core.js';
import * as inbound from './20261122_0900_inbound.js';
import * as dealList from './20261122_1000_deal_list.js';
import * as outbound from './20261122_1200_outbound.js';
import * as hostCopy from './20261123_0800_host_copy.js';
import * as hostAssertions from './20261123_0900_host_assertions.js';
import * as workerHeartbeats from './20261123_1000_worker_heartbeats.js';
import * as appKeyCheck from './20261123_1100_app_key_check.js';
import * as forecastIndexes from './20261123_1200_forecast_indexes.js';
import * as pageSessions from './20261123_1500_page_sessions.js';
import * as dealSums from './20261124_0100_deal_sums.js';
import * as passwordChange from './20261124_0200_password_change.js';
import * as stageColor from './20261124_0201_stage_color.js';
import * as inboundSourceDefaults from './20261124_0300_inbound_source_defaults.js';

/**
 * Every migration, by name in order of time. Listed statically so that the same
 * code runs under tsx, vitest and a compiled build. Add new files here; never
 * edit one that has landed.
 */
export const migrations: Record<string, Migration> = {
  '20261121_2100_core': core,
  '20261122_0900_inbound': inbound,
  '20261122_1000_deal_list': dealList,
  '20261122_1200_outbound': outbound,
  '20261123_0800_host_copy': hostCopy,
  '20261123_0900_host_assertions': hostAssertions,
  '20261123_1000_worker_heartbeats': workerHeartbeats,
  '20261123_1100_app_key_check': appKeyCheck,
  '20261123_1200_forecast_indexes': forecastIndexes,
  '20261123_1500_page_sessions': pageSessions,
  '20261124_0100_deal_sums': dealSums,
  '20261124_0200_password_change': passwordChange,
  '20261124_0201_stage_color': stageColor,
  '20261124_0300_inbound_source_defaults': inboundSourceDefaults,
};
