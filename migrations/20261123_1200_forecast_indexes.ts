import { sql, type Kysely } from 'kysely';

/**
 * The forecast reads a pipeline's open deals by expected close date and its
 * won and lost deals by when they closed: one partial index each, so a quarter
 * of a million-deal pipeline is an index range scan.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create index deals_forecast_open_idx on deals (pipeline_id, close_date) where status = 'open';
    create index deals_forecast_won_idx on deals (pipeline_id, won_at) where status = 'won';
    create index deals_forecast_lost_idx on deals (pipeline_id, lost_at) where status = 'lost';
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index deals_forecast_open_idx, deals_forecast_won_idx, deals_forecast_lost_idx`.execute(db);
}
