/**
 * An integrator's first program, written against the generated types with
 * plain openapi-fetch: create a deal, list deals with the cursor, move the deal
 * to the won stage, and handle a 422 and a 404 through the typed error body.
 * CI type-checks it against types freshly generated from the live document
 * and runs it against a live service (test/integrator-client.test.ts).
 */
import createClient from 'openapi-fetch';
import type { paths } from '../src/schema.js';

export interface FirstStepsResult {
  created: { id: number; title: string; stage: string };
  /** The 422 for an empty title: its status and the fields its details name. */
  invalid: { status: number; fields: string[]; type: string };
  /** The 404 for a deal that does not exist. */
  missing: { status: number; type: string };
  /** Deal ids in list order, gathered page by page with the cursor, and how many pages it took. */
  listed: { ids: number[]; pages: number };
  moved: { stage: string; status: 'open' | 'won' | 'lost' };
}

export async function firstSteps(baseUrl: string, authorization: string, titles: string[]): Promise<FirstStepsResult> {
  const client = createClient<paths>({ baseUrl, headers: { authorization } });

  // Create: JSON body, owner as an id the way the server accepts it.
  const ids: number[] = [];
  for (const title of titles) {
    const { data, error } = await client.POST('/service/deals/new', { body: { deal: { title, amount: 1200.5, owner: 1 } } });
    if (error) throw new Error(`create failed: ${error.errors[0]?.message}`);
    ids.push(data.deal.id);
  }
  const first = await client.GET('/service/{id}/view', { params: { path: { id: ids[0]! } } });
  if (!first.data) throw new Error('the created deal is not there');
  const created = { id: first.data.deal.id, title: first.data.deal.title, stage: first.data.deal.stage.name };

  // A 422: the typed error body names each refused field as sent.
  const refused = await client.POST('/service/deals/new', { body: { deal: { title: '' } } });
  if (!refused.error) throw new Error('an empty title was accepted');
  const invalid = { status: refused.response.status, fields: Object.keys(refused.error.errors[0]!.details), type: refused.error.errors[0]!.type };

  // A 404 through the same typed error.
  const absent = await client.GET('/service/{id}/view', { params: { path: { id: 2147483647 } } });
  if (!absent.error) throw new Error('a missing deal was found');
  const missing = { status: absent.response.status, type: absent.error.errors[0]!.type };

  // The list with the cursor: `after` is the previous page's `next`, until it is null.
  const listedIds: number[] = [];
  let pages = 0;
  let after: string | undefined;
  do {
    const { data, error } = await client.GET('/service/deals', { params: { query: { limit: 2, orderBy: 'id', orderByDir: 'asc', after } } });
    if (error) throw new Error(`list failed: ${error.errors[0]?.message}`);
    pages += 1;
    listedIds.push(...data.deals.map((deal) => deal.id));
    after = data.next ?? undefined;
  } while (after);

  // Move to the won stage of the deal's pipeline.
  const pipelines = await client.GET('/service/pipelines');
  if (!pipelines.data) throw new Error('no pipelines');
  const pipeline = pipelines.data.pipelines.find((candidate) => candidate.id === first.data.deal.pipeline.id)!;
  const won = pipeline.stages.find((stage) => stage.type === 'won')!;
  const move = await client.POST('/service/{id}/stage', { params: { path: { id: created.id } }, body: { stage_id: won.id } });
  if (move.error) throw new Error(`move failed: ${move.error.errors[0]?.message}`);
  const moved = { stage: move.data.deal.stage.name, status: move.data.deal.status };

  return { created, invalid, missing, listed: { ids: listedIds, pages }, moved };
}
