import type { BenchContext } from '../lib/context.js';
import { figure, type SectionResult, x } from '../lib/figures.js';
import { call } from '../lib/http-client.js';
import { type LoadOptions, requestLoad, startBareNode, wrkMissing } from '../lib/http-load.js';
import { alternate, median } from '../lib/measure.js';
import { startStackRequestFloor } from '../lib/platform-floor.js';

/** Headers a bare server sets itself, or that describe one connection rather than the answer. */
const OWN_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/**
 * `GET /account` under load (wrk, 2 threads, 64 connections), A/B alternating with a bare
 * `node:http` server in its own process answering the very same bytes (headers and body)
 * from memory: what the API costs on top of Node itself. A third contestant, the stack
 * alone (Fastify and Kysely reading one row of the same database, then the same bytes),
 * says how much of the gap is the stack and how much is filehaven.
 */
export async function requestRates(context: BenchContext, seconds: number): Promise<SectionResult> {
  const missing = wrkMissing();
  if (missing) return { title: 'Requests', figures: [], notes: [missing] };
  const { server, key } = context;
  const url = `${server.url}/account`;
  const sample = await call(url, { headers: { Authorization: key } });
  if (sample.status !== 200) throw new Error(`GET /account answered ${sample.status}: ${sample.body}`);
  const headers = Object.fromEntries(
    Object.entries(sample.headers)
      .filter(([name, value]) => !OWN_HEADERS.has(name) && typeof value === 'string')
      .map(([name, value]) => [name, value as string]),
  );
  const bare = await startBareNode({ headers, body: sample.body });
  const floor = await startStackRequestFloor(context.metadata, { headers, body: sample.body });
  const database = context.metadata.kind === 'sqlite' ? 'better-sqlite3' : 'pg';
  const load = { threads: 2, connections: 64, seconds };
  // alternate() keeps the rates; each run's p99 is kept beside them.
  const p99s: Record<'filehaven' | 'bare' | 'floor', number[]> = { filehaven: [], bare: [], floor: [] };
  const measure = (name: 'filehaven' | 'bare' | 'floor', target: string, options: LoadOptions) => async () => {
    const result = await requestLoad(target, options);
    p99s[name].push(result.p99Ms);
    return result.rate;
  };
  const samples = await alternate(context.rounds, {
    filehaven: measure('filehaven', url, { ...load, headers: { Authorization: key } }),
    bare: measure('bare', `${bare.url}/account`, load),
    floor: measure('floor', `${floor.url}/account`, load),
  });
  const ours = median(samples.filehaven);
  const base = median(samples.bare);
  const ratio = ours / base;
  const oursP99 = median(p99s.filehaven);
  const baseP99 = median(p99s.bare);
  const p99Ratio = oursP99 / baseP99;
  const stack = median(samples.floor);
  const stackP99 = median(p99s.floor);
  return {
    title: 'Requests',
    figures: [
      figure('GET /account, wrk -t2 -c64', `${ours.toFixed(0)} req/s`, {
        reference: `${base.toFixed(0)} req/s bare node:http, same ${Buffer.byteLength(sample.body)}-byte answer`,
        ratio: x(ratio),
        target: '≥ 0.3×',
        met: ratio >= 0.3,
      }),
      // Lower is better here: the ratio is filehaven's p99 over the bare server's.
      figure('GET /account p99 latency, wrk -t2 -c64', `${oursP99.toFixed(1)} ms`, {
        reference: `${baseP99.toFixed(1)} ms bare node:http`,
        ratio: x(p99Ratio),
        target: '≤ 4× bare',
        met: p99Ratio <= 4,
      }),
      figure(`the stack alone: Fastify + Kysely + ${database}, one row read`, `${stack.toFixed(0)} req/s, p99 ${stackP99.toFixed(1)} ms`, {
        reference: `${base.toFixed(0)} req/s bare node:http`,
        ratio: x(stack / base),
      }),
    ],
    notes: [
      `${context.rounds} rounds of ${seconds} s each, A/B alternating, medians (of the rates, and of each round's p99)`,
      `filehaven answers at ${x(ours / stack)} the rate of the stack alone`,
    ],
  };
}
