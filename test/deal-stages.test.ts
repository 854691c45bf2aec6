import { describe, expect, it } from 'vitest';
import { setupApp } from './helpers/app.js';
import { createDeal, createPipeline, createUser } from './helpers/factories.js';

describe('stage moves', () => {
  it('derives the status from every stage type, with wonAt/lostAt and the lost reason', async () => {
    const t = await setupApp();
    const p = await createPipeline(t.db);
    const [openA, openB, won, lost] = p.stages as [typeof p.stages[0], typeof p.stages[0], typeof p.stages[0], typeof p.stages[0]];
    const { id } = await createDeal(t.db, { pipelineId: p.id });
    const move = async (stageId: number, extra: Record<string, unknown> = {}) => {
      const res = await t.call({ method: 'POST', url: `/service/${id}/stage`, payload: { stage_id: stageId, ...extra } });
      expect(res.statusCode).toBe(200);
      return res.json().deal;
    };

    const toWon = await move(won.id);
    expect(toWon).toMatchObject({ status: 'won', stage: { id: won.id, type: 'won' }, lostAt: null, lostReason: null });
    expect(toWon.wonAt).not.toBeNull();

    const toLost = await move(lost.id, { lost_reason: 'Budget cut' });
    expect(toLost).toMatchObject({ status: 'lost', wonAt: null, lostReason: 'Budget cut' });
    expect(toLost.lostAt).not.toBeNull();

    const toOpen = await move(openB.id);
    expect(toOpen).toMatchObject({ status: 'open', wonAt: null, lostAt: null, lostReason: null });

    const viaForm = await t.call({
      method: 'POST',
      url: `/service/${id}/stage`,
      payload: `stage_id=${openA.id}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(viaForm.json().deal).toMatchObject({ status: 'open', stage: { id: openA.id } });
  });

  it('treats a move to the current stage as a no-op: no history row, no event', async () => {
    const t = await setupApp();
    const p = await createPipeline(t.db);
    const { id } = await createDeal(t.db, { pipelineId: p.id });
    const before = await t.call({ method: 'GET', url: `/service/${id}/view` });
    const res = await t.call({ method: 'POST', url: `/service/${id}/stage`, payload: { stage_id: p.stages[0]!.id } });
    expect(res.statusCode).toBe(200);
    expect(res.json().deal.stageChangedAt).toBe(before.json().deal.stageChangedAt);
    const events = await t.db.selectFrom('event_outbox').select('event').where('deal_id', '=', id).execute();
    expect(events.map((e) => e.event)).toEqual(['service.deal.created']);
    const history = await t.call({ method: 'GET', url: `/service/${id}/history` });
    expect(history.json().history).toHaveLength(1);
  });

  it('refuses a missing stage and needs stage_id', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    const missing = await t.call({ method: 'POST', url: `/service/${id}/stage`, payload: { stage_id: 9999 } });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().errors[0].details).toHaveProperty('stage_id');
    const none = await t.call({ method: 'POST', url: `/service/${id}/stage`, payload: {} });
    expect(none.statusCode).toBe(422);
    expect(none.json().errors[0].details).toHaveProperty('stage_id');
  });

  it('an update that changes the stage is a stage move', async () => {
    const t = await setupApp();
    const p = await createPipeline(t.db);
    const { id } = await createDeal(t.db, { pipelineId: p.id });
    const res = await t.call({ method: 'PATCH', url: `/service/${id}`, payload: { deal: { stage: p.stages[3]!.id } } });
    expect(res.json().deal.status).toBe('lost');
    const history = (await t.call({ method: 'GET', url: `/service/${id}/history` })).json().history;
    expect(history.at(-1)).toMatchObject({ from: { id: p.stages[0]!.id }, to: { id: p.stages[3]!.id, type: 'lost' } });
  });

  it('returns the history chain with who moved the deal and the time spent before each move', async () => {
    const t = await setupApp();
    const p = await createPipeline(t.db);
    const mover = await createUser(t.db, ['service:deals:editother', 'service:deals:viewother'], { name: 'Mo Mover' });
    const { id } = await createDeal(t.db, { pipelineId: p.id });
    await t.call({ method: 'POST', url: `/service/${id}/stage`, payload: { stage_id: p.stages[1]!.id } }, mover);
    await t.db
      .updateTable('deal_stage_history')
      .set({ changed_at: new Date('2026-01-01T00:00:00Z') })
      .where('deal_id', '=', id)
      .where('from_stage_id', 'is', null)
      .execute();
    await t.db
      .updateTable('deal_stage_history')
      .set({ changed_at: new Date('2026-01-01T01:00:00Z') })
      .where('deal_id', '=', id)
      .where('to_stage_id', '=', p.stages[1]!.id)
      .execute();
    const res = await t.call({ method: 'GET', url: `/service/${id}/history` });
    expect(res.json().history).toEqual([
      {
        from: null,
        to: { id: p.stages[0]!.id, name: 'Open A', type: 'open' },
        changed_by: { id: 1, name: 'Factory' },
        changedAt: '2026-01-01T00:00:00.000Z',
        secondsInPrevious: null,
      },
      {
        from: { id: p.stages[0]!.id, name: 'Open A', type: 'open' },
        to: { id: p.stages[1]!.id, name: 'Open B', type: 'open' },
        changed_by: { id: mover.id, name: 'Mo Mover' },
        changedAt: '2026-01-01T01:00:00.000Z',
        secondsInPrevious: 3600,
      },
    ]);
  });

  it('serializes concurrent moves of one deal into a consistent chain', async () => {
    const t = await setupApp();
    const p = await createPipeline(t.db, {
      stages: [
        { name: 'S1', type: 'open' },
        { name: 'S2', type: 'open' },
        { name: 'S3', type: 'open' },
        { name: 'S4', type: 'open' },
        { name: 'W', type: 'won' },
        { name: 'L', type: 'lost' },
      ],
    });
    const { id } = await createDeal(t.db, { pipelineId: p.id });
    const targets = [1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 2, 4].map((i) => p.stages[i]!.id);
    const answers = await Promise.all(
      targets.map((stageId) => t.call({ method: 'POST', url: `/service/${id}/stage`, payload: { stage_id: stageId } })),
    );
    expect(answers.map((a) => a.statusCode).every((s) => s === 200)).toBe(true);

    const history = (await t.call({ method: 'GET', url: `/service/${id}/history` })).json().history as {
      from: { id: number } | null;
      to: { id: number };
      changedAt: string;
      secondsInPrevious: number | null;
    }[];
    for (let i = 1; i < history.length; i++) {
      expect(history[i]!.from?.id).toBe(history[i - 1]!.to.id);
      expect(history[i]!.from?.id).not.toBe(history[i]!.to.id);
      expect(history[i]!.changedAt >= history[i - 1]!.changedAt).toBe(true);
      expect(history[i]!.secondsInPrevious).toBeGreaterThanOrEqual(0);
    }
    const deal = (await t.call({ method: 'GET', url: `/service/${id}/view` })).json().deal;
    expect(deal.stage.id).toBe(history.at(-1)!.to.id);
    const stageEvents = await t.db
      .selectFrom('event_outbox')
      .select(['sequence', 'payload'])
      .where('deal_id', '=', id)
      .where('event', '=', 'deal.stage_changed')
      .orderBy('sequence')
      .execute();
    expect(stageEvents).toHaveLength(history.length - 1);
    stageEvents.forEach((event, i) => {
      expect((event.payload as { previous_stage: { id: number } }).previous_stage.id).toBe(history[i + 1]!.from!.id);
    });
    const sequences = (await t.db.selectFrom('event_outbox').select('sequence').where('deal_id', '=', id).orderBy('sequence').execute()).map(
      (e) => e.sequence,
    );
    expect(sequences).toEqual(sequences.map((_, i) => i + 1));
  });
});
