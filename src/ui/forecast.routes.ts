import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DEAL_PERMISSIONS } from '../domain/deals/deal-access.js';
import { currentQuarter, pipelineForecast, type Forecast } from '../domain/deals/forecast.service.js';
import { defaultFirst, listPipelines } from '../domain/pipelines/pipelines.service.js';
import { NotFoundError } from '../http/errors.js';
import { id } from '../http/schemas.js';
import type { UiOptions } from './index.js';
import { check, formFromError, parseForm, type FormState } from './forms.js';
import { forecastCsv, forecastPage } from './forecast.view.js';
import { layout, sendHtml, viewOf, type View } from './page.js';

/**
 * The forecast page (/service/forecast) and its CSV (/service/forecast.csv):
 * one call of the API's pipelineForecast each, for a pipeline (the default one
 * first) and a period chosen as whole months (the current quarter unless
 * asked). The page carries the forecast's JSON for forecast.js to draw the
 * charts, and shows the same figures as tables.
 */

const month = z.string().trim().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'Must be a month in YYYY-MM format');
export const forecastPageQuery = z.object({ pipeline: id.optional(), from: month.optional(), to: month.optional() });
type PageQuery = z.output<typeof forecastPageQuery>;

const lastDayOf = (yearMonth: string) => {
  const [year, monthNumber] = yearMonth.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, monthNumber, 0)).toISOString().slice(0, 10);
};

/** The months a user picked, as the service's dates: the first of `from` to the last day of `to`. */
export function periodOf(query: PageQuery): { from: string; to: string } {
  const quarter = currentQuarter();
  return { from: query.from ? `${query.from}-01` : quarter.from, to: query.to ? lastDayOf(query.to) : quarter.to };
}

export async function forecastRoutes(app: FastifyInstance, deps: UiOptions): Promise<void> {
  const { db } = deps;
  const base = app.prefix;
  const view = (request: FastifyRequest): View => viewOf(request, base);
  const config = { permission: DEAL_PERMISSIONS.view, page: 'page' } as const;

  app.get('/service/forecast', { config, schema: { hide: true } }, async (request, reply) => {
    const v = view(request);
    const pipelines = defaultFirst(await listPipelines(db, v.actor));
    const render = (pipelineId: number | undefined, form: FormState, forecast: Forecast | null, status = 200) =>
      sendHtml(reply, layout(v, 'Forecast', forecastPage(v, { pipelines, pipelineId, form, forecast }), '/service/forecast', { scripts: ['uplot.min.js', 'forecast.js'], styles: ['uplot.min.css'] }), status);
    if (pipelines.length === 0) return render(undefined, { values: {}, errors: {} }, null);

    const parsed = parseForm(forecastPageQuery, request.query);
    if (!parsed.ok) return render(undefined, parsed.form, null, 422);
    const query = parsed.data;
    const pipelineId = query.pipeline ?? pipelines[0]!.id;
    const period = periodOf(query);
    const values = { from: period.from.slice(0, 7), to: period.to.slice(0, 7) };
    try {
      const forecast = await pipelineForecast(db, v.actor, pipelineId, period);
      return render(pipelineId, { values, errors: {} }, forecast);
    } catch (error) {
      // A period the service refuses (backwards, too long) is shown next to the inputs; 403/404 are error pages.
      const form = formFromError(error, values);
      if (form.message) throw error;
      return render(pipelineId, form, null, 422);
    }
  });

  app.get('/service/forecast.csv', { config, schema: { hide: true } }, async (request, reply) => {
    const v = view(request);
    const query = check(forecastPageQuery, request.query);
    const pipelineId = query.pipeline ?? defaultFirst(await listPipelines(db, v.actor))[0]?.id;
    if (pipelineId === undefined) throw new NotFoundError('Pipeline');
    const forecast = await pipelineForecast(db, v.actor, pipelineId, periodOf(query));
    return reply
      .header('Content-Type', 'text/csv; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="forecast-pipeline-${forecast.pipeline.id}-${forecast.from}-to-${forecast.to}.csv"`)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Cache-Control', 'no-store')
      .send(forecastCsv(forecast));
  });
}
