import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { BenchContext } from '../lib/context.js';
import { figure, ms, type SectionResult, x } from '../lib/figures.js';
import { call, uploadFile } from '../lib/http-client.js';
import { median, percentile, timed } from '../lib/measure.js';

const COUNT = 1000;
const CONCURRENCY = 32;
const SIZE = 4096;

/** Runs `task(i)` for i < COUNT, CONCURRENCY at a time; each one's seconds. */
async function pool(task: (i: number) => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < COUNT) {
        const i = next++;
        times.push(await timed(() => task(i)));
      }
    }),
  );
  return times;
}

/**
 * 1,000 uploads of 4 KiB (distinct bytes, so each is a new blob) by 32 clients at once,
 * each on its own keep-alive connection; against nginx PUTs of the same bodies (which
 * neither hash nor fsync nor record anything: a floor for the HTTP part, not a peer).
 */
export async function smallUploads(context: BenchContext): Promise<SectionResult> {
  const { server, key, nginx } = context;
  const bodies = Array.from({ length: COUNT }, () => randomBytes(SIZE));
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    let times: number[] = [];
    const seconds = await timed(async () => {
      times = await pool((i) => uploadFile(server.url, key, { content: bodies[i]! }, `small-${i}.bin`, agent));
    });
    const perSecond = COUNT / seconds;
    let reference = '';
    let ratio = '';
    if ('url' in nginx) {
      const nginxSeconds = await timed(() =>
        pool(async (i) => {
          const answer = await call(`${nginx.url}/small-${i}.bin`, { method: 'PUT', agent, body: bodies[i]! });
          if (answer.status !== 201 && answer.status !== 204) throw new Error(`nginx PUT answered ${answer.status}`);
        }),
      );
      reference = `${(COUNT / nginxSeconds).toFixed(0)} uploads/s nginx PUT (no hash, no fsync, no database)`;
      ratio = x(perSecond / (COUNT / nginxSeconds));
    }
    return {
      title: 'Small uploads',
      figures: [figure(`${COUNT} uploads of 4 KiB, ${CONCURRENCY} at once`, `${perSecond.toFixed(0)} uploads/s`, { reference, ratio })],
      notes: [`latency median ${ms(median(times))}, p95 ${ms(percentile(times, 0.95))}; every upload fsynced and committed before its answer`],
    };
  } finally {
    agent.destroy();
  }
}
