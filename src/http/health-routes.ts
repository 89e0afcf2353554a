import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { HttpContext } from './context.js';

/** The services this module calls. */
type Context = HttpContext<'readiness'>;

/** How long a readiness answer is reused: a load balancer's probes cost one check a second at most. */
const READINESS_CACHE_MS = 1000;
/** A check that has not answered in this long is an answer: not ready. */
const READINESS_TIMEOUT_MS = 5000;

function withTimeout(check: Promise<string | null>, ms: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${ms / 1000} s`), ms);
  });
  return Promise.race([check, late]).finally(() => clearTimeout(timer));
}

/**
 * For load balancers and orchestrators (issue 10): `/healthz` answers 200 while the process
 * runs; `/readyz` answers 200 when the database and the blob store answer and the server is
 * not shutting down, else 503 with the reason on one line. Plain text, never cached. Not
 * API paths, so the API rate limits never count them; their requests log at warn only,
 * so probes every few seconds are no noise in the log.
 */
export function registerHealthRoutes(app: FastifyInstance, context: Context): void {
  const plain = (reply: FastifyReply, status: number, text: string) =>
    reply.code(status).headers({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' }).send(`${text}\n`);

  app.get('/healthz', { logLevel: 'warn' }, (_request, reply) => {
    plain(reply, 200, 'ok');
  });

  // One check at a time: while one is pending (a database that hangs) every probe waits
  // on it rather than starting another that would take a pool connection too.
  let last: { at: number; settled: boolean; problem: Promise<string | null> } | undefined;
  app.get('/readyz', { logLevel: 'warn' }, async (_request, reply) => {
    if (context.lifecycle.draining) return plain(reply, 503, 'not ready: shutting down');
    const now = performance.now();
    if (!last || (last.settled && now - last.at >= READINESS_CACHE_MS)) {
      const check = { at: now, settled: false, problem: withTimeout(context.services.readiness(), READINESS_TIMEOUT_MS) };
      void check.problem.finally(() => (check.settled = true));
      last = check;
    }
    const problem = await last.problem;
    return problem === null ? plain(reply, 200, 'ready') : plain(reply, 503, `not ready: ${problem}`);
  });
}
