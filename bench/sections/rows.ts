import { encodeCursor } from '../../src/http/api/page-cursor.js';
import type { BenchContext } from '../lib/context.js';
import { type Figure, figure, ms, type SectionResult, x } from '../lib/figures.js';
import { atomEntryId, call, uploadFile } from '../lib/http-client.js';
import { median, timed } from '../lib/measure.js';
import { createdAtOf, fileRows, seededId, seedFiles } from '../lib/seed.js';

const SAMPLES = 300;
const WARM_UP = 30;

interface Latencies {
  details: number;
  firstPage: number;
  middlePage: number;
}

/**
 * `GET /files/<id>` and a 50-row `GET /files` page with 1,000 and then `large` file rows
 * in the table, all of them the bench account's (the worst case for its listing): one
 * request at a time on a keep-alive connection, medians. The rows are written straight
 * into the database (seed.ts); the file details ask for a random seeded row each time, the
 * pages for the newest 50 and for 50 from the middle (by cursor).
 */
export async function rows(context: BenchContext, large: number): Promise<SectionResult> {
  const { server, key, agent, metadata } = context;
  const template = atomEntryId((await uploadFile(server.url, key, { size: 1024 }, 'template.bin')).body);
  if (!template) throw new Error('no id in the template upload');
  const templateAt = await createdAtOf(metadata, template);
  const get = async (path: string) => {
    const answer = await call(`${server.url}${path}`, { agent, headers: { Authorization: key } });
    if (answer.status !== 200) throw new Error(`GET ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    return answer.body;
  };

  const measure = async (seeded: number): Promise<Latencies> => {
    const middle = Math.ceil(seeded / 2);
    const cursor = encodeCursor('files', { createdAt: templateAt - middle, id: seededId(middle) });
    const probes = {
      details: () => get(`/files/${seededId(1 + Math.floor(Math.random() * seeded))}`),
      firstPage: () => get('/files?limit=50'),
      middlePage: async () => {
        const body = await get(`/files?limit=50&cursor=${cursor}`);
        if (!body.includes(`<id>${seededId(middle + 1)}</id>`)) throw new Error(`the middle page does not start at ${seededId(middle + 1)}`);
      },
    };
    const samples: Record<keyof Latencies, number[]> = { details: [], firstPage: [], middlePage: [] };
    for (let i = 0; i < WARM_UP + SAMPLES; i++) {
      for (const name of Object.keys(probes) as (keyof Latencies)[]) {
        const seconds = await timed(probes[name]);
        if (i >= WARM_UP) samples[name].push(seconds);
      }
    }
    return { details: median(samples.details), firstPage: median(samples.firstPage), middlePage: median(samples.middlePage) };
  };

  const small = 1000;
  await seedFiles(metadata, template, 1, small);
  const smallRows = await fileRows(metadata);
  const atSmall = await measure(small);
  const seedSeconds = await timed(() => seedFiles(metadata, template, small + 1, large));
  const largeRows = await fileRows(metadata);
  const atLarge = await measure(large);

  const label = (n: number) =>
    n >= 1e6 ? `${(n / 1e6).toFixed(n % 1e6 === 0 ? 0 : 2)} M` : n >= 1e3 ? `${(n / 1e3).toFixed(n % 1e3 === 0 ? 0 : 1)} k` : String(n);
  const line = (what: string, name: keyof Latencies): Figure => {
    const ratio = atLarge[name] / atSmall[name];
    return figure(`${what} at ${label(largeRows)} rows`, ms(atLarge[name]), {
      reference: `${ms(atSmall[name])} at ${label(smallRows)} rows`,
      ratio: x(ratio),
      target: '≤ 1.5×',
      met: ratio <= 1.5,
    });
  };
  return {
    title: 'Rows',
    figures: [line('GET /files/<id>', 'details'), line('GET /files?limit=50, newest', 'firstPage'), line('GET /files?limit=50, middle (cursor)', 'middlePage')],
    notes: [
      `one request at a time, ${SAMPLES} of each after ${WARM_UP} to warm up, medians; the ratio here is time at the large table over time at the small one (lower is better)`,
      `${(largeRows - smallRows).toLocaleString('en')} rows written in ${seedSeconds.toFixed(1)} s`,
    ],
  };
}
