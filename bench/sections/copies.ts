import type { BenchContext } from '../lib/context.js';
import { figure, ms, type SectionResult } from '../lib/figures.js';
import { atomEntryId, call, uploadFile } from '../lib/http-client.js';
import { MiB, median, percentile, timed } from '../lib/measure.js';

const COPIES = 30;

/** `POST /files/copy/<id>` of a large file, one after another: a copy moves no bytes. */
export async function copies(context: BenchContext, size: number): Promise<SectionResult> {
  const { server, key, agent } = context;
  const big = atomEntryId((await uploadFile(server.url, key, { size }, 'copy-me.bin')).body);
  const small = atomEntryId((await uploadFile(server.url, key, { size: 1024 }, 'copy-me-too.bin')).body);
  if (!big || !small) throw new Error('no file id in an upload answer');
  const copyOnce = (id: string) =>
    timed(async () => {
      const answer = await call(`${server.url}/files/copy/${id}`, { method: 'POST', agent, headers: { Authorization: key } });
      if (answer.status !== 200 && answer.status !== 201) throw new Error(`copy answered ${answer.status}: ${answer.body}`);
    });
  const bigTimes: number[] = [];
  const smallTimes: number[] = [];
  await copyOnce(big); // warm-up
  for (let i = 0; i < COPIES; i++) {
    bigTimes.push(await copyOnce(big));
    smallTimes.push(await copyOnce(small));
  }
  const typical = median(bigTimes);
  return {
    title: 'Copies',
    figures: [
      figure(`copy of a ${(size / MiB / 1024).toFixed(size >= 1024 * MiB ? 0 : 2)} GiB file, POST /files/copy/<id>`, ms(typical), {
        reference: `${ms(median(smallTimes))} for a 1 KiB file`,
        target: '< 5 ms',
        met: typical < 0.005,
      }),
    ],
    notes: [`${COPIES} copies of each, one at a time on one keep-alive connection, alternating; median (p95 ${ms(percentile(bigTimes, 0.95))})`],
  };
}
