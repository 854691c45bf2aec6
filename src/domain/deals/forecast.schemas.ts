import { z } from 'zod';

/** The forecast's JSON (forecast.service.ts), as the OpenAPI document publishes it. */

const openFigures = z.object({ count: z.number().int(), amount: z.number(), weighted: z.number() });
const wonFigures = z.object({ count: z.number().int(), amount: z.number() });

const currencyForecast = z.object({
  currency: z.string(),
  open: openFigures,
  won: wonFigures,
  lost: z.object({ count: z.number().int() }),
  winRate: z.number().nullable().describe('won / (won + lost) of the deals closed in the period; null when none closed'),
  averageDaysToWin: z.number().nullable().describe('days from creation to won, averaged over the deals won in the period'),
  months: z.array(z.object({ month: z.string().describe('YYYY-MM'), open: openFigures, won: wonFigures })),
});

export const forecastJson = z.object({
  pipeline: z.object({ id: z.number().int(), name: z.string() }),
  from: z.string(),
  to: z.string(),
  months: z.array(z.string()),
  totals: z.array(currencyForecast),
  owners: z.array(z.object({ owner: z.object({ id: z.number().int(), name: z.string() }).nullable(), currencies: z.array(currencyForecast) })),
});
