import type { FastifyBaseLogger } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { DEAL_PERMISSIONS } from '../domain/deals/deal-access.js';
import { listDeals } from '../domain/deals/deals.list.js';
import {
  createDealBody,
  createTaskBody,
  dealResponse,
  listQuery,
  listResponse,
  noteBody,
  noteJson,
  stageMoveBody,
  taskJson,
  toNewDealInput,
} from '../domain/deals/deals.schemas.js';
import { createDealAsActor, getDeal, moveDealStage } from '../domain/deals/deals.service.js';
import { addNote } from '../domain/deals/notes.service.js';
import { summaryJson, summaryQuery } from '../domain/deals/summary.schemas.js';
import { pipelineSummary } from '../domain/deals/summary.service.js';
import { createTask } from '../domain/deals/tasks.service.js';
import { pipelineJson } from '../domain/pipelines/pipelines.schemas.js';
import { listPipelines } from '../domain/pipelines/pipelines.service.js';
import type { Actor, PermissionRequirement } from '../host/permissions.js';
import type { HostPort } from '../host/port.js';
import { errorBody, toAppError } from '../http/error-handler.js';
import { AppError, NotFoundError } from '../http/errors.js';
import { assertPermitted } from '../http/guard.js';
import { id } from '../http/schemas.js';

/**
 * The deal tools for AI agents (Model Context Protocol). Each tool is a REST
 * operation under another name: its input is the REST body's zod schema (with
 * the path id as `deal_id` / `pipeline_id`), it needs the REST route's
 * permission, and it calls the same domain service with the caller as actor,
 * so visibility, rules, events and sanitizing are the API's. Failures are tool
 * results with `isError` and the contract's message (the error body rides
 * along as structured content), never protocol errors.
 */

export interface ToolDeps {
  db: Db;
  host: HostPort;
  config: Config;
  actor: Actor;
  log: FastifyBaseLogger;
  /** The HTTP request's id, named in an unexpected failure as the REST error body names it. */
  requestId: string;
}

interface DealTool<S extends z.ZodObject> {
  title: string;
  description: string;
  input: S;
  /**
   * The REST route's 200 response schema: the answer is encoded with it, as the route's serializer does. Not
   * published as the tool's outputSchema: clients check a failure's structuredContent (the error body) against it
   * too, and the deal schemas would make the tool list several times longer for every agent that reads it.
   */
  output: z.ZodObject;
  /** What the REST route declares as its `config.permission`. */
  permission: PermissionRequirement;
  readOnly: boolean;
  run(deps: ToolDeps, args: z.output<S>): Promise<Record<string, unknown>>;
}

const tool = <S extends z.ZodObject>(definition: DealTool<S>) => definition as unknown as DealTool<z.ZodObject>;

const dealId = { deal_id: id.describe('The deal id') };
const pipelinesView = 'service:pipelines:view' as const;

/** Every tool, by name. The README ("Deal tools for AI agents") lists them. */
export const DEAL_TOOLS: Record<string, DealTool<z.ZodObject>> = {
  search_deals: tool({
    title: 'Search deals',
    description:
      'Deals visible to you, 30 at a time (limit up to 200). Filters: search (title contains), pipeline, stage, status (open, won, lost), owner (user id), ' +
      'closeDateFrom/closeDateTo (YYYY-MM-DD); orderBy/orderByDir sort. For the next page pass the answer\'s `next` as `after` with the same filters.',
    input: listQuery.omit({ page: true }),
    output: listResponse,
    permission: DEAL_PERMISSIONS.view,
    readOnly: true,
    run: ({ db, actor }, query) => listDeals(db, actor, { ...query, page: 1 }) as unknown as Promise<Record<string, unknown>>,
  }),

  get_deal: tool({
    title: 'View a deal',
    description: 'One deal with its stage, pipeline, buying committee (contacts with role and primary flag), notes and tasks.',
    input: z.object(dealId),
    output: dealResponse,
    permission: DEAL_PERMISSIONS.view,
    readOnly: true,
    run: async ({ db, host, actor }, args) => ({ deal: await getDeal(db, host, actor, args.deal_id) }),
  }),

  create_deal: tool({
    title: 'Create a deal',
    description:
      'Creates a deal: deal.title is required; amount (decimal, at most 2 places), currency (ISO 4217; default the service\'s), pipeline and stage ' +
      '(ids; default the default pipeline\'s first stage), closeDate (YYYY-MM-DD), owner (user id), customFields. Answers the new deal.',
    input: createDealBody,
    output: dealResponse,
    permission: 'service:deals:create',
    readOnly: false,
    run: async ({ db, host, config, actor }, body) => ({
      deal: await createDealAsActor(db, host, actor, toNewDealInput(body.deal, config.DEFAULT_CURRENCY)),
    }),
  }),

  move_deal_stage: tool({
    title: 'Move a deal to a stage',
    description:
      'Moves a deal to stage_id (a stage of its pipeline; list_pipelines shows them). A won or lost stage closes the deal; lost_reason says why it was lost.',
    input: stageMoveBody.extend(dealId),
    output: dealResponse,
    permission: DEAL_PERMISSIONS.edit,
    readOnly: false,
    run: async ({ db, actor }, args) => ({
      deal: await moveDealStage(db, actor, args.deal_id, { stageId: args.stage_id, lostReason: args.lost_reason }),
    }),
  }),

  add_note: tool({
    title: 'Add a note to a deal',
    description: 'Adds note.body (text or simple HTML; anything else is removed) to a deal.',
    input: noteBody.extend(dealId),
    output: z.object({ note: noteJson }),
    permission: DEAL_PERMISSIONS.edit,
    readOnly: false,
    run: async ({ db, actor }, args) => ({ note: await addNote(db, actor, args.deal_id, args.note.body) }),
  }),

  add_task: tool({
    title: 'Add a task to a deal',
    description: 'Adds a task to a deal: task.title is required; task.dueDate (YYYY-MM-DD) and task.assignee (user id) are optional.',
    input: createTaskBody.extend(dealId),
    output: z.object({ task: taskJson }),
    permission: DEAL_PERMISSIONS.edit,
    readOnly: false,
    run: async ({ db, host, actor }, args) => ({ task: await createTask(db, host, actor, args.deal_id, args.task) }),
  }),

  list_pipelines: tool({
    title: 'List pipelines',
    description: 'The pipelines visible to you with their ordered stages (ids, names, open/won/lost type, probability).',
    input: z.object({}),
    output: z.object({ pipelines: z.array(pipelineJson) }),
    permission: pipelinesView,
    readOnly: true,
    run: async ({ db, actor }) => ({ pipelines: await listPipelines(db, actor) }),
  }),

  pipeline_summary: tool({
    title: 'Pipeline summary',
    description:
      'Count, amount and probability-weighted amount per stage and for the whole pipeline, per currency, over the deals you may see. ' +
      'status: open (default), won, lost or all; owner and search (title contains) narrow it.',
    input: summaryQuery.extend({ pipeline_id: id.describe('The pipeline id') }),
    output: z.object({ summary: summaryJson }),
    permission: pipelinesView,
    readOnly: true,
    run: async ({ db, actor }, { pipeline_id: pipelineId, ...filters }) => ({
      summary: await pipelineSummary(db, actor, pipelineId, filters),
    }),
  }),
};

/** The validator the REST routes run (fastify-type-provider-zod), so a bad argument is named and worded as in a 422. */
function parseArguments(name: string, schema: z.ZodObject, args: unknown): unknown {
  const validate = validatorCompiler({ schema, method: 'POST', url: `/service/mcp#${name}`, httpPart: 'body' });
  const result = validate(args ?? {}) as { value?: unknown; error?: unknown[] };
  if (!result.error) return result.value;
  throw toAppError(Object.assign(new Error('Invalid arguments'), { validation: result.error, validationContext: 'body' }) as never)!;
}

function success(result: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
}

function failure(error: AppError): CallToolResult {
  return { content: [{ type: 'text', text: error.message }], structuredContent: errorBody(error), isError: true };
}

/** Runs one tool call; whatever goes wrong becomes a tool error. */
export async function callTool(deps: ToolDeps, name: string, args: unknown): Promise<CallToolResult> {
  const definition = Object.hasOwn(DEAL_TOOLS, name) ? DEAL_TOOLS[name] : undefined;
  try {
    if (!definition) throw new NotFoundError(`Tool ${name}`);
    assertPermitted(deps.actor, definition.permission);
    const result = await definition.run(deps, parseArguments(name, definition.input, args) as never);
    return success(z.encode(definition.output, result) as Record<string, unknown>);
  } catch (error) {
    const mapped = toAppError(error as never);
    if (mapped && (mapped.statusCode < 500 || mapped.statusCode === 503)) {
      if (mapped.statusCode === 503) deps.log.warn({ err: error, tool: name }, mapped.message);
      return failure(mapped);
    }
    deps.log.error({ err: error, tool: name }, 'unhandled error in an MCP tool');
    return failure(new AppError(500, 'server_error', 'Something went wrong on our side', { requestId: deps.requestId }));
  }
}

/**
 * One MCP server for one request and one caller (stateless: see the route).
 * The SDK lists the tools from their zod schemas; tools/call is answered by
 * callTool instead of the SDK's own handler, which would word validation
 * failures its own way ("Input validation error: … at deal.title") rather
 * than the contract's (`deal[title]: Required`).
 */
export function dealToolServer(deps: ToolDeps, version: string): McpServer {
  const server = new McpServer(
    { name: 'deal-pipeline-service', title: 'Deal pipeline service', version },
    {
      instructions:
        'Deals move through the ordered stages of pipelines. Find deals with search_deals, read one with get_deal, ' +
        'see stage ids with list_pipelines. Ids are integers. Every tool acts with your own permissions.',
    },
  );
  for (const [name, definition] of Object.entries(DEAL_TOOLS)) {
    server.registerTool(
      name,
      {
        title: definition.title,
        description: definition.description,
        inputSchema: definition.input,
        annotations: { readOnlyHint: definition.readOnly, destructiveHint: false, openWorldHint: false },
      },
      (args: unknown) => callTool(deps, name, args),
    );
  }
  server.server.setRequestHandler(CallToolRequestSchema, (request) => callTool(deps, request.params.name, request.params.arguments));
  return server;
}
