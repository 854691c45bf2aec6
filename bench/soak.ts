/**
 * Soak: a mixed load against the real service for SOAK_SECONDS (default 300),
 * sampling the service process's resident memory every 10 s; then, in the same
 * run, the deal view's requests per second against a bare route running
 * `select 1` on the same pool.
 *
 * The load, all at once, each at a fixed offered rate (SOAK_SCALE multiplies them):
 * - reads (8 connections, 120/s): deal list pages (sorted and filtered variants)
 *   and deal views of deals the run created;
 * - writes (4 connections, 30/s): create, edit, stage move through the API;
 * - inbound (4 connections, 60/s): signed receives from 4 sources, a third of
 *   them updating a deal by `external_id`, contacts from a pool of 500 emails;
 * - deliveries: every event goes to a local receiver through one subscription
 *   (the service's inline worker delivers them).
 *
 * Memory: VmRSS of the service process (it runs its delivery worker inline, so
 * that is the whole service) from /proc/PID/status. The report has every sample,
 * the least-squares slope over the run and after the first minute (warm-up: JIT,
 * caches and the pool filling), the slope of each minute's lowest sample (the
 * trend judged: RSS is a garbage collector's sawtooth, and a leak raises its
 * floor), the maximum, and a plot (bench/results/soak-rss.svg).
 *
 * View vs select 1: the service is started with BENCH_SELECT1_ROUTE=1, which adds
 * GET /bench/select-1 (no auth, `select 1` on the service's pool; never in
 * production). With the load stopped and the database checkpointed, 50 connections
 * alternate between the two for 5 rounds of VIEW_SECONDS (5) each; the median of
 * the rounds' ratios is the figure.
 *
 *   flock /tmp/bench.lock npx tsx bench/soak.ts      (npm run bench:soak)
 *
 * Env: SOAK_SECONDS (300), SOAK_SCALE (1), VIEW_SECONDS (5), BENCH_DATABASE_URL
 * (else embedded PostgreSQL under bench/.data/soak, emptied first).
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { EVENT_NAMES } from '../src/events/events.js';
import { basicHeader, benchDatabase, cpuLine, cpuPerRequest, cpuTimes, load, median, medianCpu, prng, progress, ROOT, startService, writeReport, type CpuTimes } from './lib.js';

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const SCALE = Number(process.env.SOAK_SCALE ?? 1);
const SAMPLE_SECONDS = 10;
const WARM_UP_SECONDS = 60;
const VIEW_SECONDS = Number(process.env.VIEW_SECONDS ?? 5);
const VIEW_ROUNDS = 5;
const VIEW_CONNECTIONS = 50;
const RSS_TARGET_MB = 300;
/** Above this slope after the warm-up (MB per minute; 60 MB an hour) the run counts as an upward trend. */
const TREND_LIMIT_MB_PER_MIN = 1;
const VIEW_TARGET = 0.5;
const SOURCES = 4;
const EMAILS = 500;

const round = (value: number, digits = 1) => Number(value.toFixed(digits));
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Resident memory of a process in MB (VmRSS), or undefined once it is gone. */
function rssMb(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return sxx ? sxy / sxx : 0;
}

interface Sample {
  seconds: number;
  rssMb: number;
}

/** A line chart of the samples (no dependencies): RSS over time, the target, and the trend after the warm-up. */
function rssChart(samples: Sample[], trend: { slopePerSecond: number; intercept: number; from: number }, subtitle: string): string {
  const width = 760;
  const height = 380;
  const m = { left: 60, right: 20, top: 48, bottom: 46 };
  const maxX = Math.max(SOAK_SECONDS, ...samples.map((s) => s.seconds));
  const maxY = Math.ceil(Math.max(RSS_TARGET_MB * 1.1, ...samples.map((s) => s.rssMb * 1.1)) / 50) * 50;
  const x = (seconds: number) => m.left + (seconds / maxX) * (width - m.left - m.right);
  const y = (mb: number) => height - m.bottom - (mb / maxY) * (height - m.top - m.bottom);
  const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const parts: string[] = [];
  parts.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#fff"/>`);
  for (let mb = 0; mb <= maxY; mb += 50) {
    parts.push(`<line x1="${m.left}" x2="${width - m.right}" y1="${y(mb)}" y2="${y(mb)}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${m.left - 8}" y="${y(mb) + 4}" text-anchor="end">${mb}</text>`);
  }
  const step = maxX > 600 ? 120 : 60;
  for (let s = 0; s <= maxX; s += step) {
    parts.push(`<line x1="${x(s)}" x2="${x(s)}" y1="${height - m.bottom}" y2="${height - m.bottom + 5}" stroke="#333"/>`);
    parts.push(`<text x="${x(s)}" y="${height - m.bottom + 18}" text-anchor="middle">${s}</text>`);
  }
  parts.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${height - m.bottom}" stroke="#333"/>`);
  parts.push(`<line x1="${m.left}" x2="${width - m.right}" y1="${height - m.bottom}" y2="${height - m.bottom}" stroke="#333"/>`);
  parts.push(`<text x="${(m.left + width - m.right) / 2}" y="${height - 8}" text-anchor="middle">seconds since the load started</text>`);
  parts.push(`<text x="16" y="${(m.top + height - m.bottom) / 2}" text-anchor="middle" transform="rotate(-90 16 ${(m.top + height - m.bottom) / 2})">RSS (MB)</text>`);
  parts.push(
    `<line x1="${m.left}" x2="${width - m.right}" y1="${y(RSS_TARGET_MB)}" y2="${y(RSS_TARGET_MB)}" stroke="#c0392b" stroke-dasharray="6 4"/>`,
    `<text x="${width - m.right - 4}" y="${y(RSS_TARGET_MB) - 6}" text-anchor="end" fill="#c0392b">target: ${RSS_TARGET_MB} MB</text>`,
  );
  const t0 = trend.from;
  const t1 = maxX;
  parts.push(
    `<line x1="${x(t0)}" x2="${x(t1)}" y1="${y(trend.intercept + trend.slopePerSecond * t0)}" y2="${y(trend.intercept + trend.slopePerSecond * t1)}" stroke="#7f8c8d" stroke-dasharray="3 3"/>`,
  );
  parts.push(
    `<polyline fill="none" stroke="#2563eb" stroke-width="2" points="${samples.map((s) => `${round(x(s.seconds))},${round(y(s.rssMb))}`).join(' ')}"/>`,
  );
  for (const s of samples) parts.push(`<circle cx="${round(x(s.seconds))}" cy="${round(y(s.rssMb))}" r="3" fill="#2563eb"><title>${s.seconds} s: ${round(s.rssMb)} MB</title></circle>`);
  parts.push(`<text x="${m.left}" y="20" font-size="15" font-weight="bold">Service resident memory (VmRSS) under the mixed load, every ${SAMPLE_SECONDS} s</text>`);
  parts.push(`<text x="${m.left}" y="38" fill="#555">${esc(subtitle)}</text>`);
  parts.push(
    `<g transform="translate(${width - m.right - 250} ${height - m.bottom - 46})"><line x1="0" x2="24" y1="0" y2="0" stroke="#2563eb" stroke-width="2"/><text x="30" y="4">RSS</text>` +
      `<line x1="0" x2="24" y1="18" y2="18" stroke="#7f8c8d" stroke-dasharray="3 3"/><text x="30" y="22">trend of each minute's lowest sample</text></g>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">\n${parts.join('\n')}\n</svg>\n`;
}

/** Counts deliveries by event id; answers 200 at once. */
function startReceiver() {
  const arrived = new Set<string>();
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests += 1;
    const id = String(request.headers['webhook-id']);
    request.resume();
    request.on('end', () => {
      arrived.add(id);
      response.end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise<{ url: string; arrived: Set<string>; requests: () => number; close(): void }>((done) =>
    server.listen(0, '127.0.0.1', () =>
      done({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
        arrived,
        requests: () => requests,
        close: () => server.close(),
      }),
    ),
  );
}

async function api<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: basicHeader, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function main(): Promise<void> {
  const bench = await benchDatabase('soak', {}, { fresh: true });
  const receiver = await startReceiver();
  const service = await startService(bench.url, { INBOUND_RATE_LIMIT: '100000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', BENCH_SELECT1_ROUTE: '1' });
  const pid = service.child.pid!;
  try {
    const random = prng(20261123);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    await api(service.url, 'POST', '/host/webhooks/new', { name: 'soak receiver', url: receiver.url, events: EVENT_NAMES });
    const { stages } = await api<{ stages: { id: number; type: string; pipeline: { id: number } }[] }>(service.url, 'GET', '/service/stages');
    const pipelineId = stages[0]!.pipeline.id;
    const openStages = stages.filter((s) => s.pipeline.id === pipelineId && s.type === 'open').map((s) => s.id);
    const sources: { id: string; secret: string }[] = [];
    for (let i = 0; i < SOURCES; i++) {
      sources.push((await api<{ source: { id: string; secret: string } }>(service.url, 'POST', '/service/settings/inbound-webhooks/new', { source: { name: `soak ${i + 1}` } })).source);
    }
    // A few hundred deals to read and edit from the start.
    const dealIds: number[] = [];
    for (let i = 0; i < 200; i++) {
      const { deal } = await api<{ deal: { id: number } }>(service.url, 'POST', '/service/deals/new', {
        deal: { title: `Soak seed ${i + 1}`, amount: String(1000 + i), closeDate: '2027-03-01', customFields: { seed: i } },
      });
      dealIds.push(deal.id);
    }

    const counts = { reads: 0, writes: 0, receives: 0, errors: 0 };
    const statuses = new Map<string, number>();
    const count = (kind: string, status: number) => {
      const key = `${kind} ${status}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      if (status >= 400) counts.errors += 1;
    };
    const orders = ['id', 'title', 'amount', 'closeDate', 'updatedAt'];
    const reads: autocannon.Request = {
      method: 'GET',
      setupRequest: (request) => {
        const r = random();
        const path =
          r < 0.5
            ? `/service/${pick(dealIds)}/view`
            : r < 0.8
              ? `/service/deals?limit=30&page=${1 + Math.floor(random() * 5)}&orderBy=${pick(orders)}&orderByDir=${random() < 0.5 ? 'asc' : 'desc'}`
              : `/service/deals?limit=30&status=open&stage=${pick(openStages)}`;
        return { ...request, path, headers: { authorization: basicHeader } };
      },
      onResponse: (status: number) => {
        counts.reads += 1;
        count('read', status);
      },
    };
    let written = 0;
    const writes: autocannon.Request = {
      method: 'POST',
      setupRequest: (request) => {
        const r = random();
        written += 1;
        const [path, body] =
          r < 0.4
            ? ['/service/deals/new', { deal: { title: `Soak deal ${written}`, amount: (random() * 10_000).toFixed(2), customFields: { n: written } } }]
            : r < 0.7
              ? [`/service/${pick(dealIds)}/edit`, { deal: { amount: (random() * 10_000).toFixed(2), title: `Soak edit ${written}` } }]
              : [`/service/${pick(dealIds)}/stage`, { stage_id: pick(openStages) }];
        return { ...request, path, headers: { authorization: basicHeader, 'content-type': 'application/json' }, body: JSON.stringify(body) };
      },
      onResponse: (status: number, body: string) => {
        counts.writes += 1;
        count('write', status);
        // New deals join the pool that reads and edits pick from (bounded, so the bench's own memory stays flat).
        if (status === 200 && dealIds.length < 50_000) {
          const id = (JSON.parse(body) as { deal?: { id: number } }).deal?.id;
          if (id && !dealIds.includes(id)) dealIds.push(id);
        }
      },
    };
    let sent = 0;
    const runId = Date.now().toString(36);
    const inbound: autocannon.Request = {
      method: 'POST',
      setupRequest: (request) => {
        const source = pick(sources);
        sent += 1;
        const update = random() < 0.33;
        const body = JSON.stringify({
          ...(update ? { external_id: `soak-${Math.floor(random() * 300)}` } : {}),
          title: `Soak inbound ${runId}-${sent}`,
          amount: Math.round(random() * 1_000_000) / 100,
          contact: { email: `soak-${Math.floor(random() * EMAILS)}@soak.example`, first_name: 'Soak', last_name: `Buyer ${sent}` },
          custom_fields: { campaign: `c-${sent % 11}` },
        });
        const signature = `sha256=${createHmac('sha256', source.secret).update(body).digest('hex')}`;
        return {
          ...request,
          path: `/service/settings/inbound-webhooks/${source.id}/receive`,
          headers: { 'content-type': 'application/json', 'x-service-signature': signature },
          body,
        };
      },
      onResponse: (status: number) => {
        counts.receives += 1;
        count('receive', status);
      },
    };

    const started = Date.now();
    const samples: Sample[] = [{ seconds: 0, rssMb: rssMb(pid)! }];
    process.stderr.write(`soak: ${SOAK_SECONDS} s of mixed load; RSS at start ${round(samples[0]!.rssMb)} MB\n`);
    const runs = [
      { connections: 8, rate: 120, request: reads },
      { connections: 4, rate: 30, request: writes },
      { connections: 4, rate: 60, request: inbound },
    ].map(({ connections, rate, request }) =>
      autocannon({ url: service.url, connections, overallRate: Math.max(1, Math.round(rate * SCALE)), duration: SOAK_SECONDS, requests: [request] }),
    );
    const sampler = setInterval(() => {
      const rss = rssMb(pid);
      if (rss === undefined) return;
      const seconds = Math.round((Date.now() - started) / 1000);
      samples.push({ seconds, rssMb: rss });
      process.stderr.write(
        `soak: ${seconds}/${SOAK_SECONDS} s, RSS ${round(rss)} MB, reads ${counts.reads}, writes ${counts.writes}, receives ${counts.receives}, ` +
          `deliveries ${receiver.arrived.size}, errors ${counts.errors}\n`,
      );
    }, SAMPLE_SECONDS * 1000);
    const results = await Promise.all(runs);
    clearInterval(sampler);
    const loadSeconds = (Date.now() - started) / 1000;

    // Deliveries: every recorded event should reach the receiver; give the worker a minute to finish the tail.
    const recorded = async () => Number((await sql<{ n: number }>`select count(*)::int as n from event_outbox`.execute(bench.database.db)).rows[0]!.n);
    let events = await recorded();
    const lagAtEnd = events - receiver.arrived.size;
    for (let i = 0; i < 60 && receiver.arrived.size < events; i++) {
      await sleep(1000);
      events = await recorded();
    }
    const rssAfterDrain = rssMb(pid);

    // The view against select 1, load stopped, alternating so both see the same machine.
    const viewDeal = dealIds[dealIds.length - 1]!;
    await api(service.url, 'POST', `/service/${viewDeal}/notes`, { note: { body: 'A note so the view has some.' } }).catch(() => undefined);
    // Let the database settle after the soak's writes (a checkpoint now rather than during the rounds), then a short
    // warm-up of both (JIT, and the view's prepared statement on every pool connection).
    await sql`checkpoint`.execute(bench.database.db);
    await sleep(5000);
    await load({ url: `${service.url}/service/${viewDeal}/view`, connections: VIEW_CONNECTIONS, duration: 3, headers: { authorization: basicHeader } });
    await load({ url: `${service.url}/bench/select-1`, connections: VIEW_CONNECTIONS, duration: 3 });
    const viewRounds: { view: number; select1: number; viewP99: number; select1P99: number; viewCpu: CpuTimes; select1Cpu: CpuTimes }[] = [];
    // Each route's CPU per request, by process: with both cores busy, the ratio of the rates is the ratio of these sums.
    const measured = async (options: autocannon.Options) => {
      const before = cpuTimes(pid);
      const result = await load(options);
      return { ...result, cpu: cpuPerRequest(before, cpuTimes(pid), result.requests) };
    };
    for (let i = 0; i < VIEW_ROUNDS; i++) {
      const view = await measured({ url: `${service.url}/service/${viewDeal}/view`, connections: VIEW_CONNECTIONS, duration: VIEW_SECONDS, headers: { authorization: basicHeader } });
      const select1 = await measured({ url: `${service.url}/bench/select-1`, connections: VIEW_CONNECTIONS, duration: VIEW_SECONDS });
      if (view.non2xx || select1.non2xx || view.errors || select1.errors) throw new Error(`view or select-1 failed: ${JSON.stringify({ view, select1 })}`);
      viewRounds.push({ view: view.rps, select1: select1.rps, viewP99: view.p99, select1P99: select1.p99, viewCpu: view.cpu, select1Cpu: select1.cpu });
      progress(`view vs select 1, ${VIEW_CONNECTIONS} connections, ${VIEW_SECONDS} s each`, i + 1, VIEW_ROUNDS);
    }
    const viewRps = median(viewRounds.map((r) => r.view));
    const select1Rps = median(viewRounds.map((r) => r.select1));
    const viewRatio = median(viewRounds.map((r) => r.view / r.select1));
    const viewCpu = medianCpu(viewRounds.map((r) => r.viewCpu));
    const select1Cpu = medianCpu(viewRounds.map((r) => r.select1Cpu));
    const cpuSum = (c: CpuTimes) => c.service + c.postgres + c.bench;

    const maxRss = Math.max(...samples.map((s) => s.rssMb));
    const all = samples.map((s) => ({ x: s.seconds, y: s.rssMb }));
    const after = all.filter((p) => p.x >= WARM_UP_SECONDS);
    const slopeAll = slope(all) * 60;
    const slopeAfter = slope(after) * 60;

    // RSS of a garbage-collected process is a sawtooth (it grows until a full collection, then drops), so a slope over
    // a few minutes depends on where the window cuts a tooth. What a leak raises is the floor: the lowest sample of
    // each minute after the warm-up, and the slope of those.
    const floors: { x: number; y: number }[] = [];
    for (let start = WARM_UP_SECONDS; start < loadSeconds; start += 60) {
      const minute = after.filter((p) => p.x >= start && p.x < start + 60);
      // A minute cut short by the end of the run (fewer than 3 samples) has no floor to speak of.
      if (minute.length >= 3) floors.push(minute.reduce((low, p) => (p.y < low.y ? p : low)));
    }
    const slopeFloors = slope(floors) * 60;
    const meanX = floors.reduce((s, p) => s + p.x, 0) / Math.max(floors.length, 1);
    const meanY = floors.reduce((s, p) => s + p.y, 0) / Math.max(floors.length, 1);
    const upward = slopeFloors > TREND_LIMIT_MB_PER_MIN;
    const subtitle = `max ${round(maxRss)} MB; floors' slope ${round(slopeFloors, 2)} MB/min (all samples after ${WARM_UP_SECONDS} s: ${round(slopeAfter, 2)}); load avg ${os1()}`;
    await writeFile(
      join(ROOT, 'bench', 'results', 'soak-rss.svg'),
      rssChart(samples, { slopePerSecond: slopeFloors / 60, intercept: meanY - (slopeFloors / 60) * meanX, from: WARM_UP_SECONDS }, subtitle),
    );

    const rate = (r: autocannon.Result) => `${round(r.requests.average)}/s (p99 ${r.latency.p99} ms)`;
    await writeReport(
      'soak',
      `Soak: ${SOAK_SECONDS} s of mixed load (reads, writes, inbound, deliveries), memory, and the deal view against select 1`,
      [
        { metric: 'load duration (s)', value: round(loadSeconds) },
        { metric: 'reads answered (deal list, deal view)', value: `${counts.reads} at ${rate(results[0]!)}` },
        { metric: 'writes answered (create, edit, stage move)', value: `${counts.writes} at ${rate(results[1]!)}` },
        { metric: 'inbound receives answered', value: `${counts.receives} at ${rate(results[2]!)}` },
        { metric: 'answers by kind and status', value: [...statuses].sort().map(([k, n]) => `${k}: ${n}`).join(', ') },
        { metric: 'events recorded / delivered to the local receiver (distinct ids)', value: `${events} / ${receiver.arrived.size} (${lagAtEnd} behind when the load stopped; ${receiver.requests()} requests)` },
        { metric: 'RSS samples', value: samples.length },
        { metric: '**RSS max (MB)**', value: `**${round(maxRss)}**` },
        { metric: 'RSS at start / end of load / after the drain (MB)', value: `${round(samples[0]!.rssMb)} / ${round(samples[samples.length - 1]!.rssMb)} / ${rssAfterDrain ? round(rssAfterDrain) : 'n/a'}` },
        { metric: 'RSS slope over the whole run (MB/min)', value: round(slopeAll, 2) },
        { metric: `RSS slope after the first ${WARM_UP_SECONDS} s (MB/min)`, value: round(slopeAfter, 2) },
        { metric: 'RSS floor per minute after the warm-up (lowest sample of each minute, MB)', value: floors.map((p) => `${p.x} s: ${round(p.y)}`).join(', ') },
        { metric: '**RSS floor slope (MB/min; the trend judged)**', value: `**${round(slopeFloors, 2)}**` },
        { metric: `deal view, ${VIEW_CONNECTIONS} connections, req/s (median of ${VIEW_ROUNDS})`, value: round(viewRps) },
        { metric: `select 1 route, ${VIEW_CONNECTIONS} connections, req/s (median of ${VIEW_ROUNDS})`, value: round(select1Rps) },
        { metric: 'rounds: view / select 1 req/s (p99 ms)', value: viewRounds.map((r) => `${round(r.view)} (${r.viewP99}) / ${round(r.select1)} (${r.select1P99})`).join('; ') },
        { metric: '**view / select 1 (median of the rounds\' ratios)**', value: `**${round(viewRatio * 100)}%**` },
        { metric: 'CPU µs per request, view (median of the rounds)', value: cpuLine(viewCpu) },
        { metric: 'CPU µs per request, select 1 (median of the rounds)', value: cpuLine(select1Cpu) },
        { metric: `view's CPU budget at ${VIEW_TARGET * 100}% of select 1 (select 1's sum / ${VIEW_TARGET})`, value: Math.round(cpuSum(select1Cpu) / VIEW_TARGET) },
      ],
      [
        `RSS target < ${RSS_TARGET_MB} MB: ${maxRss < RSS_TARGET_MB ? 'met' : 'MISSED'}; no upward trend (slope of the per-minute floors after the warm-up ≤ ${TREND_LIMIT_MB_PER_MIN} MB/min): ${upward ? 'MISSED' : 'met'}. The least-squares slope of all samples after the warm-up is reported too; over five minutes it mostly says where the run ended on the sawtooth.`,
        `View target ≥ ${VIEW_TARGET * 100}% of select 1: ${viewRatio >= VIEW_TARGET ? 'met' : 'MISSED'}.`,
        `CPU per request is read from /proc during each round (utime + stime of the service, of every PostgreSQL process including exited backends, and of this process, which runs autocannon), divided by the requests answered. Both routes keep the two cores busy, so the rates' ratio is close to the inverse ratio of these sums; the budget says what the view's sum would have to be for the target.`,
        `Every delivered: ${receiver.arrived.size >= events ? 'yes' : `NO (${events - receiver.arrived.size} missing after 60 s)`}.`,
        `Plot: [soak-rss.svg](soak-rss.svg). Samples (s: MB): ${samples.map((s) => `${s.seconds}: ${round(s.rssMb)}`).join(', ')}.`,
        `Offered rates (autocannon overallRate, SOAK_SCALE=${SCALE}): reads ${Math.round(120 * SCALE)}/s on 8 connections, writes ${Math.round(30 * SCALE)}/s on 4, inbound ${Math.round(60 * SCALE)}/s on 4 (4 sources, a third updating by external_id); one webhook subscription to a local receiver for every event.`,
        `The view is of deal ${viewDeal} (made during the run, with its note); the select-1 route (BENCH_SELECT1_ROUTE=1) has no auth or schema, the view goes through Basic auth (cached), the permission guard, one statement and its response schema.`,
        `Service: src/server.ts with its worker inline, default pool (DB_POOL_SIZE 20), INBOUND_RATE_LIMIT=100000, WEBHOOK_ALLOW_PRIVATE_TARGETS=true, BENCH_SELECT1_ROUTE=1.`,
        `Command: flock /tmp/bench.lock npx tsx bench/soak.ts (npm run bench:soak; SOAK_SECONDS=${SOAK_SECONDS}).`,
      ],
    );
    if (maxRss >= RSS_TARGET_MB || upward || viewRatio < VIEW_TARGET) process.exitCode = 1;
  } finally {
    receiver.close();
    await service.stop();
    await bench.stop();
  }
}

function os1(): string {
  return (readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3) as string[]).join(' / ');
}

await main();
