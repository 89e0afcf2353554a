import type { FastifyInstance } from 'fastify';
import { errors } from '../../domain/errors.js';
import type { ServerLifecycle } from '../context.js';

/**
 * Refusals that Node or Fastify would otherwise answer in their own shapes, moved into
 * the error catalogue so that API clients always get the Atom error (API.md 3) and
 * browsers the error page:
 * - an HTTP/1.1 request without Host, or with a target that is not a path (RFC 9112 3.2: 400).
 * While the server drains (RunningServer.close sets `lifecycle.draining`), a request that
 * arrives on a connection already open is served, and its response closes the connection:
 * nobody sends another on it.
 */
export function registerProtocolChecks(app: FastifyInstance, lifecycle: ServerLifecycle): void {
  // A callback hook, not an async one: it runs on every request and has nothing to wait for.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    if (lifecycle.draining) reply.header('Connection', 'close');
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
