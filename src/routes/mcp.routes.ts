import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from './deps.js';
import { DEAL_TOOLS, dealToolServer } from '../mcp/deal-tools.js';
import { errorResponse } from '../http/error-responses.js';
import { errorBody } from '../http/error-handler.js';
import { AppError } from '../http/errors.js';
import { actorOf } from '../http/guard.js';

const jsonRpcId = z.union([z.string(), z.number().int()]);
/** A request (with an id) or a notification (without); this server sends no requests, so clients send no responses. */
const jsonRpcMessage = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: jsonRpcId.optional().describe('Absent for a notification'),
  method: z.string().min(1).max(200).describe('initialize, tools/list, tools/call, ping, notifications/initialized, ...'),
  params: z.record(z.string(), z.unknown()).optional(),
});
const jsonRpcReply = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: jsonRpcId.nullable(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
});

/** The media types a Streamable HTTP client must accept; the SDK answers in JSON here (enableJsonResponse). */
const NEEDED_ACCEPT = ['application/json', 'text/event-stream'];

/**
 * The Model Context Protocol endpoint (Streamable HTTP), stateless: every POST
 * gets its own MCP server and transport, built for the caller the guard
 * authenticated, and answers in plain JSON. Nothing lives between requests,
 * so any process behind the load balancer can answer any request and there is
 * no session to share or expire. The tools: src/mcp/deal-tools.ts.
 */
export const mcpRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db, host, config }) => {
  app.post(
    '/service/mcp',
    {
      // Credentials as for the REST API (Basic, bearer, host assertion); each tool checks its REST route's permission.
      // No session cookie: a browser would send it along on a cross-site request, and agents hold no sessions.
      config: { authenticated: true },
      schema: {
        tags: ['mcp'],
        summary: 'Deal tools for AI agents (Model Context Protocol, Streamable HTTP)',
        description:
          'A JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call); connect with an MCP client and your API credentials. ' +
          `Send \`Accept: ${NEEDED_ACCEPT.join(', ')}\`. Stateless: no Mcp-Session-Id; GET (a server-sent event stream) is not offered. ` +
          `Tools: ${Object.keys(DEAL_TOOLS).join(', ')}. A tool that fails (validation, permission, not found, conflict, unavailable) ` +
          'answers 200 with a tool result marked isError whose text is the error message and whose structuredContent is the error body.',
        // One message per POST: the protocol has had no JSON-RPC batches since its 2025-06-18 revision.
        body: jsonRpcMessage,
        response: {
          200: jsonRpcReply.describe('The JSON-RPC answer (to a request), with the tool result for tools/call'),
          202: z.null().describe('Accepted: only notifications were sent, so there is nothing to answer (no body)'),
          400: jsonRpcReply.describe('A message the MCP SDK cannot read (a JSON-RPC error body)'),
          403: errorResponse('A cross-site request refused'),
          406: errorResponse(`Accept does not list ${NEEDED_ACCEPT.join(' and ')}`),
          415: errorResponse('Not application/json'),
        },
      },
    },
    async (request, reply) => {
      if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '')) {
        throw new AppError(415, 'unsupported_media_type', 'Send application/json: MCP messages are JSON-RPC');
      }
      const accept = request.headers.accept ?? '';
      if (!NEEDED_ACCEPT.every((type) => accept.includes(type))) {
        throw new AppError(406, 'not_acceptable', `Accept must list ${NEEDED_ACCEPT.join(' and ')} (MCP Streamable HTTP)`);
      }

      const server = dealToolServer({ db, host, config, actor: actorOf(request), log: request.log, requestId: request.id }, '1.0.0');
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      // From here the SDK writes the answer; the headers set so far (X-Request-Id) go with it.
      reply.hijack();
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (error) {
        request.log.error({ err: error }, 'MCP request failed');
        if (!reply.raw.headersSent) {
          const body = errorBody(new AppError(500, 'server_error', 'Something went wrong on our side', { requestId: request.id }));
          reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
        }
      }
    },
  );
};
