/**
 * The deal list and view at 1,000,000 deals: the first page, a cursor page at
 * the very end (both with `total`), the same first page as a view-own seller,
 * a title search (capped count), GET view of a deal with 5 contacts, 20
 * notes and 10 tasks, the pipeline summary, and the pipeline's forecast for a quarter. Each row is the median of ROUNDS autocannon runs.
 *
 *   flock /tmp/bench.lock npx tsx bench/deals-list.ts     (npm run bench:deals)
 *
 * Env: BENCH_DURATION (seconds per run, default 10), BENCH_ROUNDS (default 3),
 * BENCH_CONNECTIONS (default 4), BENCH_DATABASE_URL (else embedded PostgreSQL
 * under bench/.data/deals, seeded once by bench/deals-seed.ts).
 */
import { basicHeader, benchDatabase, load, medianOf, startService, writeReport } from './lib.js';
import { BENCH_VIEWER, seed, SEED_DEALS } from './deals-seed.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
const TARGET_P99_MS = 20;
const FORECAST_P99_MS = 200;
const SUMMARY_P99_MS = 50;

const viewerHeader = `Basic ${Buffer.from(`${BENCH_VIEWER.username}:${BENCH_VIEWER.password}`).toString('base64')}`;

/** The `after` cursor the list hands out, built for the last page of the id order. */
const cursorAt = (id: number) => Buffer.from(JSON.stringify({ o: 'id', d: 'asc', v: id, i: id })).toString('base64url');

async function main(): Promise<void> {
  const bench = await benchDatabase('deals');
  const { richDealId } = await seed(bench.database.db);
  const { pipeline_id: pipelineId } = await bench.database.db.selectFrom('deals').select('pipeline_id').where('id', '=', 1).executeTakeFirstOrThrow();
  const maxId = Number((await bench.database.db.selectFrom('deals').select((eb) => eb.fn.max('id').as('max')).executeTakeFirstOrThrow()).max);
  const service = await startService(bench.url);
  try {
    const cases = [
      { name: 'list, first page (admin)', path: '/service/deals', auth: basicHeader },
      { name: 'list, cursor page at the end (admin)', path: `/service/deals?after=${cursorAt(maxId - 30)}`, auth: basicHeader },
      { name: 'list, first page (view-own seller)', path: '/service/deals', auth: viewerHeader },
      { name: 'list, title search (capped count)', path: '/service/deals?search=Globex', auth: basicHeader },
      { name: 'view, 5 contacts + 20 notes + 10 tasks', path: `/service/${richDealId}/view`, auth: basicHeader },
      { name: 'pipeline summary, open deals (admin)', path: `/service/pipelines/${pipelineId}/summary`, auth: basicHeader },
      { name: 'forecast, a quarter of the pipeline (admin)', path: `/service/pipelines/${pipelineId}/forecast?from=2026-10-01&to=2026-12-31`, auth: basicHeader },
    ];

    const rows: Record<string, string | number>[] = [];
    for (const c of cases) {
      const check = await fetch(`${service.url}${c.path}`, { headers: { authorization: c.auth } });
      const body = (await check.json()) as { total?: number; totalApproximate?: boolean; deals?: unknown[] };
      if (check.status !== 200) throw new Error(`${c.name}: ${check.status} ${JSON.stringify(body)}`);
      const shape = body.deals
        ? `${body.deals.length} deals, total ${body.total}${body.totalApproximate ? ' (capped)' : ''}`
        : c.name.startsWith('forecast') ? 'one quarter' : c.name.startsWith('pipeline summary') ? 'every stage' : 'one deal';

      await load({ url: `${service.url}${c.path}`, connections: CONNECTIONS, duration: 2, headers: { authorization: c.auth } }); // warm-up
      const result = await medianOf(ROUNDS, c.name, async () => ({
        ...(await load({ url: `${service.url}${c.path}`, connections: CONNECTIONS, duration: DURATION, headers: { authorization: c.auth } })),
      }));
      rows.push({
        case: c.name,
        answer: shape,
        'p50 ms': result.p50,
        'p99 ms': result.p99,
        'req/s': Math.round(result.rps),
        'errors / non-2xx': `${result.errors} / ${result.non2xx}`,
      });
    }

    const listRows = rows.slice(0, 2);
    const met = listRows.every((r) => Number(r['p99 ms']) < TARGET_P99_MS);
    const forecastMet = Number(rows.at(-1)!['p99 ms']) < FORECAST_P99_MS;
    const summaryMet = Number(rows.at(-2)!['p99 ms']) < SUMMARY_P99_MS;
    await writeReport('deals-list', `Deal list and view at ${SEED_DEALS.toLocaleString('en')} deals`, rows, [
      `Target p99 < ${TARGET_P99_MS} ms for the first page and the cursor page at the end, total included: ${met ? 'met' : 'MISSED'}.`,
      `Target p99 < ${SUMMARY_P99_MS} ms for the pipeline summary: ${summaryMet ? 'met' : 'MISSED'}.`,
      `Target p99 < ${FORECAST_P99_MS} ms for the forecast of a quarter: ${forecastMet ? 'met' : 'MISSED'}.`,
      `autocannon, ${CONNECTIONS} connections, ${DURATION} s per run, median of ${ROUNDS} runs after a 2 s warm-up; the real service (src/server.ts) with the embedded PostgreSQL, on a 2-core machine shared with the load generator.`,
      '`total` comes from deal_counters (trigger-kept, exact) for pipeline/stage/status/owner filters and visibility; a title search or close-date range uses a count capped at 1,000 (`totalApproximate`).',
      'Command: flock /tmp/bench.lock npx tsx bench/deals-list.ts',
    ]);
  } finally {
    await service.stop();
    await bench.stop();
  }
}

await main();
