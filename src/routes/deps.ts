import type { Config } from '../config.js';
import type { Cluster } from '../db/cluster.js';
import type { Db } from '../db/database.js';
import type { HostPort } from '../host/port.js';

/** What every route plugin receives as options. */
export interface RouteDeps {
  config: Config;
  db: Db;
  host: HostPort;
  baseUrl: string;
  /** The service processes sharing the database (cache invalidation, shared limits). */
  cluster: Cluster;
}
