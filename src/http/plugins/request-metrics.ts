import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../context.js';

/** The services this module calls. */
type Context = HttpContext<'metrics'>;

/**
 * Counts every request Fastify routes (`filehaven_http_requests_total`, and its duration)
 * when its response closes, which it does however it ends: sent, failed, or cut by a
 * client that left (Fastify's onResponse runs only for a response that finished). The
 * route label is the router's pattern (`/files/:ref`), never the URL. Registered before
 * every other onRequest hook, so the requests those refuse are counted too.
 */
export function registerRequestMetrics(app: FastifyInstance, context: Context): void {
  const { metrics } = context.services;
  // A callback hook: it runs on every request and has nothing to wait for.
  app.addHook('onRequest', (request, reply, done) => {
    const res = reply.raw;
    res.once('close', () => {
      metrics.request(request.routeOptions.url, request.method, res.headersSent ? res.statusCode : 'aborted', reply.elapsedTime / 1000);
    });
    done();
  });
}
