import type { FastifyInstance } from 'fastify';
import { errors } from '../../domain/errors.js';

/**
 * Refusals that Node or Fastify would otherwise answer in their own shapes, moved into
 * the error catalogue so that API clients always get the Atom error (API.md 3) and
 * browsers the error page:
 * - an HTTP/1.1 request without Host, or with a target that is not a path (RFC 9112 3.2: 400);
 * - a request arriving while the server shuts down (503, connection closed).
 */
export function registerProtocolChecks(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A callback hook, not an async one: it runs on every request and has nothing to wait for.
  app.addHook('onRequest', (request, _reply, done) => {
    if (closing) return done(errors.unavailable());
    const raw = request.raw;
    if (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1 && raw.headers.host === undefined) return done(errors.badRequest('Missing Host header'));
    // RFC 9112 3.2: a path, an absolute URL, or `*` for OPTIONS alone (`GET *` was served the home page).
    const target = raw.url ?? '';
    if (!target.startsWith('/') && !/^https?:\/\//i.test(target) && !(target === '*' && raw.method === 'OPTIONS')) {
      return done(errors.badRequest('Invalid request target'));
    }
    done();
  });
}
