import type { FastifyInstance, FastifyReply } from 'fastify';
import type { HttpContext } from './context.js';

/** How long a readiness answer is reused: a load balancer's probes cost one check a second at most. */
const READINESS_CACHE_MS = 1000;

/**
 * For load balancers and orchestrators (issue 10): `/healthz` answers 200 while the process
 * runs; `/readyz` answers 200 when the database and the blob store answer and the server is
 * not shutting down, else 503 with the reason on one line. Plain text, never cached.
 */
export function registerHealthRoutes(app: FastifyInstance, context: HttpContext): void {
  const plain = (reply: FastifyReply, status: number, text: string) =>
    reply.code(status).headers({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' }).send(`${text}\n`);

  app.get('/healthz', (_request, reply) => {
    plain(reply, 200, 'ok');
  });

  let last: { at: number; problem: Promise<string | null> } | undefined;
  app.get('/readyz', async (_request, reply) => {
    if (context.lifecycle.draining) return plain(reply, 503, 'not ready: shutting down');
    const now = Date.now();
    if (!last || now - last.at >= READINESS_CACHE_MS) last = { at: now, problem: context.services.readiness() };
    const problem = await last.problem;
    return problem === null ? plain(reply, 200, 'ready') : plain(reply, 503, `not ready: ${problem}`);
  });
}
