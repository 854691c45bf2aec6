import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { BuiltinRouteDeps as RouteDeps } from './deps.js';
import { UnauthorizedError, ValidationError } from '../../../http/errors.js';

const tokenRequest = z.object({
  grant_type: z.literal('client_credentials', { error: 'Must be client_credentials' }),
  client_id: z.string().min(1).optional(),
  client_secret: z.string().min(1).optional(),
});

/** RFC 6749 form-encodes Basic client credentials; a malformed escape just fails authentication. */
const formDecode = (value: string) => {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
};

/** OAuth 2.0 client-credentials grant (RFC 6749 section 4.4); client auth in the body or as HTTP Basic. */
export const oauthRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, deps) => {
  app.post(
    '/oauth/v2/token',
    {
      // No session or Basic user: the client credentials in the body (or Basic) are checked here (401 when wrong).
      config: { public: true, credentials: true },
      schema: {
        tags: ['auth'],
        summary: 'Issue an access token (client credentials)',
        body: tokenRequest,
        response: {
          200: z.object({ access_token: z.string(), token_type: z.literal('bearer'), expires_in: z.number() }),
        },
      },
    },
    async (request) => {
      let { client_id: clientId, client_secret: clientSecret } = request.body;
      const header = request.headers.authorization;
      if (header?.toLowerCase().startsWith('basic ')) {
        const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon > 0) {
          clientId = formDecode(decoded.slice(0, colon));
          clientSecret = formDecode(decoded.slice(colon + 1));
        }
      }
      if (!clientId) throw ValidationError.field('client_id', 'Required');
      if (!clientSecret) throw ValidationError.field('client_secret', 'Required');
      const attempt = { who: `client:${clientId}`, address: request.ip };
      app.loginLimiter.check(attempt);
      const grant = await deps.auth.issueToken(clientId, clientSecret);
      if (!grant) {
        await app.loginLimiter.fail(attempt);
        throw new UnauthorizedError('Invalid client credentials');
      }
      app.loginLimiter.succeed(attempt);
      return grant;
    },
  );
};
