import { describe, expect, it } from 'vitest';
import { setupApp } from './helpers/app.js';
import { createSource, receive } from './helpers/inbound.js';

describe('DEFAULT_CURRENCY', () => {
  it('is the currency of deals created without one, through the API and through inbound webhooks', async () => {
    const t = await setupApp({ config: { DEFAULT_CURRENCY: 'EUR' } });
    const api = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'No currency given' } } });
    expect(api.json().deal.currency).toBe('EUR');
    const chosen = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'Pounds', currency: 'gbp' } } });
    expect(chosen.json().deal.currency).toBe('GBP');

    const source = await createSource(t);
    const received = await receive(t, source, { title: 'From a sender' });
    const deal = await t.call({ method: 'GET', url: `/service/${received.json().deal.id}/view` });
    expect(deal.json().deal.currency).toBe('EUR');
  });
});
