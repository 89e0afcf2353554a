import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { constantTimeEqual } from '../security/secrets.js';
import type { HttpContext } from './context.js';

/** The services this module calls. */
type Context = HttpContext<'config' | 'metrics'>;

/** Compared as digests: equal lengths, so not even the token's length leaks through timing. */
const digest = (token: string) => createHash('sha256').update(token).digest('hex');

/** The token of `Authorization: Bearer <token>`, or null. */
function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return match ? match[1]! : null;
}

/**
 * `GET /metrics` for Prometheus (issue 10 item 5), in its text format. With
 * `--metrics-token` it needs `Authorization: Bearer <token>` (401 without, 403 with
 * another); without one it is served to whoever reaches the port, as exporters usually
 * are: docs/operating.md tells a proxy in front to keep it to itself. Not an API path, so the
 * API rate limits never count it; its requests log at warn only, so scrapes are no noise.
 */
export function registerMetricsRoute(app: FastifyInstance, context: Context): void {
  const { metrics, config } = context.services;
  const expected = config.metricsToken === null ? null : digest(config.metricsToken);
  const plain = (reply: FastifyReply, status: number, text: string) =>
    reply.code(status).headers({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' }).send(`${text}\n`);

  app.get('/metrics', { logLevel: 'warn' }, async (request, reply) => {
    if (expected !== null) {
      const given = bearerToken(request.headers.authorization);
      if (given === null)
        return plain(reply.header('WWW-Authenticate', 'Bearer realm="metrics"'), 401, 'metrics need the token: Authorization: Bearer <token>');
      if (!constantTimeEqual(digest(given), expected)) return plain(reply, 403, 'wrong metrics token');
    }
    const text = await metrics.render();
    return reply.code(200).headers({ 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' }).send(text);
  });
}
