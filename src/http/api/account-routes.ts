import type { FastifyInstance } from 'fastify';
import { sqlDateTime } from '../../domain/dates.js';
import { money } from '../../domain/money.js';
import { premiumState } from '../../domain/types.js';
import { entryEl, textEl } from '../atom.js';
import type { HttpContext } from '../context.js';
import { requireAccount } from '../plugins/api-auth.js';
import { sendAtom } from '../plugins/atom-reply.js';
import { apiRoute } from '../plugins/method-dispatch.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock'>;

/** GET /account (SPEC.md "GET /account"; API.md 3 and 5). */
export function registerAccountRoutes(app: FastifyInstance, context: Context): void {
  apiRoute(app, '/account', {
    GET: async (request, reply) => {
      const account = await requireAccount(context, request);
      return sendAtom(context, request, reply, 200, 'Account Info', [
        entryEl(
          textEl('id', account.id),
          textEl('ed:name', account.name),
          textEl('ed:email', account.email),
          textEl('ed:balance', money(account.balanceCents)),
          textEl('ed:premium', premiumState(account, context.services.clock())),
          textEl('ed:premium_start', sqlDateTime(account.premiumStart)),
          textEl('ed:premium_end', sqlDateTime(account.premiumEnd)),
          textEl('ed:premium_trafficLeft', account.trafficLeft),
        ),
      ]);
    },
  });
}
