import type { BenchContext } from '../lib/context.js';
import { figure, type SectionResult, x } from '../lib/figures.js';
import { call } from '../lib/http-client.js';
import { requestRate, startBareNode, wrkMissing } from '../lib/http-load.js';
import { alternate, median } from '../lib/measure.js';

/** Headers a bare server sets itself, or that describe one connection rather than the answer. */
const OWN_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/**
 * `GET /account` under load (wrk, 2 threads, 64 connections), A/B alternating with a bare
 * `node:http` server in its own process answering the very same bytes (headers and body)
 * from memory: what the API costs on top of Node itself.
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
  const load = { threads: 2, connections: 64, seconds };
  const samples = await alternate(context.rounds, {
    filehaven: () => requestRate(url, { ...load, headers: { Authorization: key } }),
    bare: () => requestRate(`${bare.url}/account`, load),
  });
  const ours = median(samples.filehaven);
  const base = median(samples.bare);
  const ratio = ours / base;
  return {
    title: 'Requests',
    figures: [
      figure('GET /account, wrk -t2 -c64', `${ours.toFixed(0)} req/s`, {
        reference: `${base.toFixed(0)} req/s bare node:http, same ${Buffer.byteLength(sample.body)}-byte answer`,
        ratio: x(ratio),
        target: '≥ 0.3×',
        met: ratio >= 0.3,
      }),
    ],
    notes: [`${context.rounds} rounds of ${seconds} s each, A/B alternating, medians`],
  };
}
