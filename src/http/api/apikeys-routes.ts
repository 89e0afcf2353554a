import type { FastifyInstance } from 'fastify';
import { errors } from '../../domain/errors.js';
import { entryEl, textEl } from '../atom.js';
import type { HttpContext } from '../context.js';
import { sendAtom } from '../plugins/atom-reply.js';
import { apiRoute } from '../plugins/method-dispatch.js';
import { bodyField, formField } from './form.js';

/** The services this module calls. */
type Context = HttpContext<'accounts' | 'clock' | 'config' | 'limits'>;

/** POST /apikeys (SPEC.md "POST /apikeys"; API.md 5). */
export function registerApiKeyRoutes(app: FastifyInstance, context: Context): void {
  apiRoute(app, '/apikeys', {
    POST: async (request, reply) => {
      // Credentials only from the body (SPEC.md: form-encoded bodies): a query string
      // ends up in access logs and proxies. `pass` is an alias of `password` (API.md 2).
      const login = bodyField(request, 'login') ?? '';
      const password = bodyField(request, 'password') ?? bodyField(request, 'pass') ?? '';
      // Failed attempts are limited per client address and per login (API.md 8).
      const account = await context.services.limits.signIn.attempt(request.ip, login, () => context.services.accounts.authenticate(login, password));
      // Accounts with a second factor or single sign-on take their key from the profile
      // (issue 26); said only after the right password, so it tells a guesser nothing.
      const refusal = await context.services.accounts.passwordKeyRefusal(
        account,
        context.services.config.oidcOnly,
        context.services.config.secondFactorRequired,
      );
      if (refusal !== null) throw errors.permissionDenied(`${refusal}; copy it from ${context.links.webUrl}/accounts/profile/misc`);
      // An explicit "create" answers errorApiKeyAlreadyCreated when a key exists (API.md 5).
      const explicitCreate = /^(1|true|yes)$/i.test(formField(request, 'create') ?? '');
      const key = await context.services.accounts.apiKeyFor(account, explicitCreate);
      // The answer carries the key: no cache (browser, proxy) may keep it (RFC 9111 5.2.2.5; issue 14).
      reply.header('Cache-Control', 'no-store');
      return sendAtom(context, request, reply, 201, 'ApiKey', [entryEl(textEl('title', 'apikey'), { name: 'content', attrs: [['type', 'text']], text: key })]);
    },
  });
}
