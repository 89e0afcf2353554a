import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { redactUrl } from '../../src/configured-stores.js';
import { freePort, localNginxConf, NGINX_CONF, NGINX_PATH, runNginx, writeNginxFrame } from '../../test/helpers/cluster.js';
import { redisProblem } from '../../test/helpers/redis.js';
import { defer } from '../lib/cleanup.js';
import type { BenchContext } from '../lib/context.js';
import { curlUpload, writeBody } from '../lib/curl.js';
import { figure, rate, type SectionResult, x } from '../lib/figures.js';
import { apiKey, startFilehaven } from '../lib/filehaven-server.js';
import { call } from '../lib/http-client.js';
import { requestRate, startBareNode, wrkMissing } from '../lib/http-load.js';
import { alternate, MiB, mbps, median, timed } from '../lib/measure.js';

/** Uploads sent at once through nginx in one round of the upload figure. */
const PARALLEL_UPLOADS = 4;

/**
 * One server against two behind nginx, nginx running the recommended site of docs/scaling.md
 * (deploy/nginx/filehaven.conf, as the cluster test runs it), both servers on this
 * backend and, when it answers, one Redis for the shared limits, as a fleet runs: what a
 * second server buys on this machine. `GET /account` (wrk) and parallel uploads (curl),
 * one-server and two-server rounds alternating. The reference for the request rate is a
 * bare node:http server behind the same nginx site. On two cores, two servers, nginx and
 * the load generator share the same cores: the figure says what a second process is worth
 * here, not on a machine with a core per server.
 */
export async function cluster(context: BenchContext, seconds: number, uploadSize: number): Promise<SectionResult> {
  const missing = wrkMissing() ?? nginxMissing();
  if (missing) return { title: 'Several servers behind nginx', figures: [], notes: [missing] };
  const redis = await redisUrl();
  const shared = redis ? ['--redis-url', redis, '--redis-prefix', `bench-${process.pid}:`] : [];
  const settings = (name: string) => ({
    flags: [...context.settings.flags, ...shared, '--server-name', name, '--trust-proxy', 'true'],
    env: context.settings.env,
  });
  // Both on the bench's data folder: the same secret, and on SQLite the same database.
  const first = await startFilehaven(context.dataDir, settings('bench-cluster-1'));
  const second = await startFilehaven(context.dataDir, settings('bench-cluster-2'));
  const key = await apiKey(first.url, 'bench');
  const sample = await call(`${first.url}/account`, { headers: { Authorization: key } });
  if (sample.status !== 200) throw new Error(`GET /account answered ${sample.status}: ${sample.body}`);
  const bare = await startBareNode({ headers: { 'content-type': String(sample.headers['content-type']) }, body: sample.body });

  const one = await startNginxSite(context.work, 'one', [first.url]);
  const two = await startNginxSite(context.work, 'two', [first.url, second.url]);
  const bareBehind = await startNginxSite(context.work, 'bare', [bare.url]);

  const load = { threads: 2, connections: 64, seconds, headers: { Authorization: key } };
  const requests = await alternate(context.rounds, {
    one: () => requestRate(`${one}/account`, load),
    two: () => requestRate(`${two}/account`, load),
    bare: () => requestRate(`${bareBehind}/account`, load),
  });

  const files = await Promise.all(
    Array.from({ length: PARALLEL_UPLOADS }, async (_, i) => {
      const file = path.join(context.work, `cluster-upload-${i}.bin`);
      await writeBody(file, uploadSize);
      return file;
    }),
  );
  const uploadRound = (url: string) => async () => {
    const wall = await timed(() => Promise.all(files.map((file) => curlUpload(url, key, file))));
    return mbps(PARALLEL_UPLOADS * uploadSize, wall);
  };
  const uploads = await alternate(context.rounds, { one: uploadRound(one), two: uploadRound(two) });

  const [oneRate, twoRate, bareRate] = [median(requests.one), median(requests.two), median(requests.bare)];
  const [oneUpload, twoUpload] = [median(uploads.one), median(uploads.two)];
  return {
    title: 'Several servers behind nginx',
    figures: [
      figure('GET /account through nginx, one server, wrk -t2 -c64', `${oneRate.toFixed(0)} req/s`, {
        reference: `${bareRate.toFixed(0)} req/s bare node:http behind the same nginx site`,
        ratio: x(oneRate / bareRate),
      }),
      figure('GET /account through nginx, two servers', `${twoRate.toFixed(0)} req/s`, {
        reference: `${oneRate.toFixed(0)} req/s one server`,
        ratio: x(twoRate / oneRate),
      }),
      figure(`upload, ${PARALLEL_UPLOADS} × ${uploadSize / MiB} MiB at once through nginx, one server`, rate(oneUpload)),
      figure(`upload, ${PARALLEL_UPLOADS} × ${uploadSize / MiB} MiB at once through nginx, two servers`, rate(twoUpload), {
        reference: `${rate(oneUpload)} one server`,
        ratio: x(twoUpload / oneUpload),
      }),
    ],
    notes: [
      `${context.rounds} rounds each, one and two servers alternating, medians; wrk rounds of ${seconds} s`,
      redis
        ? `shared limits on Redis at ${redactUrl(redis)}`
        : 'no Redis answered (BENCH_REDIS_URL, default redis://127.0.0.1:6379): each server counts its limits alone',
      'the uploads send the same bytes, so every one after the first is stored as a copy of one blob (hashed and staged in full all the same)',
    ],
  };
}

function nginxMissing(): string | null {
  const found = spawnSync(NGINX_PATH, ['-v'], { encoding: 'utf8' });
  return found.error || found.status !== 0
    ? `no nginx at ${NGINX_PATH}: the figures with several servers are left out (Debian: apt-get install nginx-light)`
    : null;
}

/** The Redis of the fleet figures: BENCH_REDIS_URL, or the machine's own when it answers (with the URL's credentials); null without one. */
async function redisUrl(): Promise<string | null> {
  const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  return (await redisProblem(url, 1000)) === null ? url : null;
}

/** nginx on the recommended site in front of `upstreams`, framed as the cluster test frames it; its URL. Stopped when the section unwinds. */
async function startNginxSite(work: string, name: string, upstreams: string[]): Promise<string> {
  const dir = await mkdtemp(path.join(work, `nginx-${name}-`));
  const listen = await freePort();
  const servers = upstreams.map((url) => ({ port: Number(new URL(url).port), down: false }));
  await writeFile(path.join(dir, 'filehaven.conf'), localNginxConf(await readFile(NGINX_CONF, 'utf8'), listen, servers));
  await writeNginxFrame(dir, { accessLog: false });
  const { child, exited } = await runNginx(dir, listen);
  defer(`stop nginx (${name})`, async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  });
  return `http://127.0.0.1:${listen}`;
}
