import { spawn } from 'node:child_process';
import http from 'node:http';
import { encodeCursor } from '../../src/http/api/page-cursor.js';
import type { BenchContext } from '../lib/context.js';
import { type Figure, figure, ms, type SectionResult, x } from '../lib/figures.js';
import { PASSWORD, SERVER_ENTRY } from '../lib/filehaven-server.js';
import { atomEntryId, call, uploadFile } from '../lib/http-client.js';
import { median, rssPeak, timed } from '../lib/measure.js';
import { createdAtOf, execute, fileRows, SEED_STEP_MS, seededId, seedFiles, seedSite } from '../lib/seed.js';

const SAMPLES = 150;
const WARM_UP = 20;
/** Console overview and CLI samples (each a heavier request). */
const FEW = 5;

type Probe = 'details' | 'firstPage' | 'middlePage' | 'upload' | 'copy' | 'move';
type Latencies = Record<Probe, number>;

/**
 * Issue 28 target 7 (internet-scale tables). With 1,000 file rows and then `large`, of
 * which a tenth are the bench account's and the rest spread over large/100 other accounts
 * and large/10 folders (seed.ts, straight into the database): `GET /files/<id>`, a 50-row
 * `GET /files` page (newest, and from the middle by cursor), an upload (1 KiB), a copy
 * (`POST /files/copy/<id>`), a move of one file into a folder (`PUT /folders/<id>;files`),
 * one request at a time on a keep-alive connection, medians; then the console overview
 * (first open and later ones), the operator CLI's `files list`, and a gc that expires
 * rows from the big table (its rate and its peak RSS).
 */
export async function rows(context: BenchContext, large: number): Promise<SectionResult> {
  const { server, key, metadata } = context;
  // A keep-alive connection idle through a long seed may be closed by the server just as it
  // is reused (EPIPE, socket hang up at 10 M rows): each phase gets a connection of its own.
  let agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const template = atomEntryId((await uploadFile(server.url, key, { size: 1024 }, 'template.bin')).body);
  if (!template) throw new Error('no id in the template upload');
  const templateAt = await createdAtOf(metadata, template);
  const authorized = { Authorization: key };
  const expect = async (path: string, options: Parameters<typeof call>[1], ok: number[]) => {
    const answer = await call(`${server.url}${path}`, { agent, ...options, headers: { ...authorized, ...options?.headers } });
    if (!ok.includes(answer.status)) throw new Error(`${options?.method ?? 'GET'} ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    return answer.body;
  };
  const get = (path: string) => expect(path, {}, [200]);
  const folderBody = await expect(
    '/folders',
    { method: 'POST', body: 'name=bench-target', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
    [200, 201],
  );
  const folder = /<id>([A-Z0-9]{10})<\/id>/.exec(folderBody)?.[1];
  if (!folder) throw new Error(`no folder id: ${folderBody.slice(0, 300)}`);

  const measure = async (seeded: number): Promise<Latencies> => {
    const middle = Math.ceil(seeded / 2);
    const cursor = encodeCursor('files', { createdAt: templateAt - middle * SEED_STEP_MS, id: seededId(middle) });
    const anySeeded = () => seededId(1 + Math.floor(Math.random() * seeded));
    const probes: Record<Probe, () => Promise<unknown>> = {
      details: () => get(`/files/${anySeeded()}`),
      firstPage: () => get('/files?limit=50'),
      middlePage: async () => {
        const body = await get(`/files?limit=50&cursor=${cursor}`);
        if (!body.includes(`<id>${seededId(middle + 1)}</id>`)) throw new Error(`the middle page does not start at ${seededId(middle + 1)}`);
      },
      upload: () => uploadFile(server.url, key, { size: 1024 }, 'probe.bin', agent),
      copy: () => expect(`/files/copy/${template}`, { method: 'POST' }, [200, 201]),
      move: () =>
        expect(
          `/folders/${folder};files`,
          { method: 'PUT', body: `files[0]=${anySeeded()}`, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
          [200],
        ),
    };
    const names = Object.keys(probes) as Probe[];
    const samples = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<Probe, number[]>;
    for (let i = 0; i < WARM_UP + SAMPLES; i++) {
      for (const name of names) {
        const seconds = await timed(probes[name]);
        if (i >= WARM_UP) samples[name].push(seconds);
      }
    }
    return Object.fromEntries(names.map((n) => [n, median(samples[n])])) as Latencies;
  };

  // The console: the bench account made an operator, signed in like a browser.
  await execute(metadata, `UPDATE accounts SET is_operator = 1 WHERE login = ?`, `UPDATE accounts SET is_operator = 1 WHERE login = $1`, [context.login]);
  const cookie = await signIn(server.url, context.login);
  const overview = async () => {
    const answer = await call(`${server.url}/console`, { agent, headers: { Cookie: cookie, Accept: 'text/html' } });
    if (answer.status !== 200) throw new Error(`GET /console answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  };
  const overviewTimes = async () => {
    const first = await timed(overview);
    const later: number[] = [];
    for (let i = 0; i < FEW; i++) later.push(await timed(overview));
    return { first, later: median(later) };
  };
  const cliList = async () => {
    const times: number[] = [];
    for (let i = 0; i < FEW; i++) times.push(await timed(() => cli(context, ['files', 'list', '--limit', '50', '--json'])));
    return median(times);
  };

  const small = 1000;
  await seedFiles(metadata, template, 1, small);
  const smallRows = await fileRows(metadata);
  const atSmall = await measure(small);
  const overviewSmall = await overviewTimes();
  const cliSmall = await cliList();

  const benchRows = Math.max(small + 1, Math.ceil(large / 10));
  const accounts = Math.max(1, Math.floor(large / 100));
  const shape = { accounts, folders: accounts * 10, files: Math.max(0, large - benchRows) };
  const seedSeconds = await timed(async () => {
    await seedFiles(metadata, template, small + 1, benchRows);
    await seedSite(metadata, template, shape);
  });
  agent.destroy();
  agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  // The seed wrote into days already finished, which no site does: the days the small
  // phase's overview kept are forgotten, so the first open below computes them again.
  await execute(metadata, 'DELETE FROM site_days', 'DELETE FROM site_days', []);
  const largeRows = await fileRows(metadata);
  const atLarge = await measure(benchRows);
  const overviewLarge = await overviewTimes();
  const cliLarge = await cliList();

  // gc over the big table: the oldest EXPIRED rows of the other accounts past their own expiry.
  const expired = Math.min(5_000, Math.max(200, Math.floor(large / 1000)));
  // A pass with nothing to expire first: what the process and the rest of a pass cost.
  const gcBase = await cli(context, ['gc'], true);
  await execute(
    metadata,
    `UPDATE files SET expires_at = created_at + 1 WHERE id >= 'T' AND id <= ?`,
    `UPDATE files SET expires_at = created_at + 1 WHERE id >= 'T' AND id <= $1`,
    [`T${String(expired).padStart(9, '0')}`],
  );
  const gc = await cli(context, ['gc'], true);
  const gcRate = expired / Math.max(0.001, gc.seconds - gcBase.seconds);

  const label = (n: number) =>
    n >= 1e6 ? `${(n / 1e6).toFixed(n % 1e6 === 0 ? 0 : 2)} M` : n >= 1e3 ? `${(n / 1e3).toFixed(n % 1e3 === 0 ? 0 : 1)} k` : String(n);
  const compare = (what: string, atL: number, atS: number): Figure => {
    const ratio = atL / atS;
    return figure(`${what} at ${label(largeRows)} rows`, ms(atL), {
      reference: `${ms(atS)} at ${label(smallRows)} rows`,
      ratio: x(ratio),
      target: '≤ 1.5×',
      met: ratio <= 1.5,
    });
  };
  const line = (what: string, name: Probe) => compare(what, atLarge[name], atSmall[name]);
  agent.destroy();
  return {
    title: 'Rows',
    figures: [
      line('GET /files/<id>', 'details'),
      line('GET /files?limit=50, newest', 'firstPage'),
      line('GET /files?limit=50, middle (cursor)', 'middlePage'),
      line('POST /files (1 KiB)', 'upload'),
      line('POST /files/copy/<id>', 'copy'),
      line('PUT /folders/<id>;files (one file)', 'move'),
      figure(`console overview at ${label(largeRows)} rows, later opens`, ms(overviewLarge.later), {
        reference: `${ms(overviewSmall.later)} at ${label(smallRows)} rows`,
        target: '< 1 s',
        met: overviewLarge.later < 1,
      }),
      figure(`console overview at ${label(largeRows)} rows, first open (computes and keeps the finished days)`, ms(overviewLarge.first), {
        reference: `${ms(overviewSmall.first)} at ${label(smallRows)} rows`,
      }),
      compare('filehaven files list --limit 50 (a CLI process)', cliLarge, cliSmall),
      figure(`gc over ${label(largeRows)} rows, ${expired.toLocaleString('en')} of them expired`, `${gcRate.toFixed(0)} rows/s`, {
        reference: `peak RSS ${(gc.peakRss / 1e6).toFixed(0)} MB; ${gc.seconds.toFixed(1)} s, against ${gcBase.seconds.toFixed(1)} s (${(gcBase.peakRss / 1e6).toFixed(0)} MB) for a pass with none`,
      }),
    ],
    notes: [
      `one request at a time, ${SAMPLES} of each after ${WARM_UP} to warm up, medians; the ratio here is time at the large table over time at the small one (lower is better)`,
      `${(largeRows - smallRows).toLocaleString('en')} rows written in ${seedSeconds.toFixed(1)} s: ${benchRows.toLocaleString('en')} of the bench account, the rest over ${shape.accounts.toLocaleString('en')} accounts and ${shape.folders.toLocaleString('en')} folders`,
      `the console overview: ${FEW} opens after the first, median; the CLI: ${FEW} runs, each a process that opens the database`,
    ],
  };
}

/** Signs in on the web form like a browser; the Cookie header of the session. */
async function signIn(url: string, login: string): Promise<string> {
  const jar = new Map<string, string>();
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  };
  const header = () => [...jar].map(([n, v]) => `${n}=${v}`).join('; ');
  const form = await fetch(`${url}/signin`, { headers: { Accept: 'text/html' }, redirect: 'manual' });
  keep(form);
  const csrf = /<input type="hidden" name="csrf" value="([^"]*)">/.exec(await form.text())?.[1];
  if (!csrf) throw new Error('no CSRF field on /signin');
  const answer = await fetch(`${url}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { Accept: 'text/html', Cookie: header() },
    body: new URLSearchParams({ csrf, login, password: PASSWORD }),
  });
  keep(answer);
  if (answer.status !== 303 && answer.status !== 302) throw new Error(`sign-in answered ${answer.status}: ${(await answer.text()).slice(0, 300)}`);
  return header();
}

/** Runs the compiled CLI on the bench's data folder and backend; its time and peak RSS. */
async function cli(context: BenchContext, args: string[], sample = false): Promise<{ seconds: number; peakRss: number }> {
  const started = performance.now();
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('FILEHAVEN_')));
  const child = spawn(process.execPath, [SERVER_ENTRY, ...args, '--data', context.dataDir, ...context.settings.flags], {
    env: { ...env, ...context.settings.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const peak = sample && child.pid !== undefined ? rssPeak(child.pid) : undefined;
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const peakRss = peak?.stop() ?? 0;
  if (code !== 0) throw new Error(`filehaven ${args.join(' ')} exited ${code}: ${output.slice(0, 500)}`);
  return { seconds: (performance.now() - started) / 1000, peakRss };
}
