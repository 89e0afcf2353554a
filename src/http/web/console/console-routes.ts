import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../../context.js';
import { sendErrorPage } from '../layout.js';
import { sessionFormValid } from '../session-plugin.js';
import { registerConsoleAccounts } from './console-accounts.js';
import { registerConsoleAudit } from './console-audit.js';
import { registerConsoleBlacklist } from './console-blacklist.js';
import { registerConsoleFiles } from './console-files.js';
import { registerConsoleOverview } from './console-overview.js';
import { registerConsoleShares } from './console-shares.js';

/** The services this module calls. */
type Context = HttpContext<'audit' | 'clock' | 'config' | 'files' | 'gc' | 'moderation' | 'operator' | 'secondFactors' | 'sessions'>;

/**
 * The operator console (`/console`, issue 12): for operator accounts only. To everyone
 * else, signed in or not, every console address is the site's ordinary 404 page, so the
 * console does not even show that it exists. Every change goes through
 * OperatorActionsService, the use case the CLI calls, and is audited as `web:<login>`.
 */
export function registerConsole(app: FastifyInstance, context: Context): void {
  // An encapsulated plugin: its hooks guard the console's routes and nothing else.
  app.register(async (scope) => {
    // onRequest, before the body is read: a visitor learns nothing and sends nothing further.
    // The account is re-read on every request (SessionService.resume), so an operator flag
    // removed or an account disabled takes effect at once.
    scope.addHook('onRequest', async (request, reply) => {
      if (!request.webSession?.account.isOperator) return sendErrorPage(reply, 404, 'Not found', 'There is nothing at this address.');
    });
    // Every console form is a POST that must carry the session's CSRF token.
    scope.addHook('preHandler', async (request, reply) => {
      if (request.method === 'POST' && !sessionFormValid(context, request, reply)) return reply;
    });
    registerConsoleOverview(scope, context);
    registerConsoleAccounts(scope, context);
    registerConsoleFiles(scope, context);
    registerConsoleShares(scope, context);
    registerConsoleBlacklist(scope, context);
    registerConsoleAudit(scope, context);
  });
}
