import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEST_BACKEND } from '../helpers/backend.js';
import { assertOk, runCli } from '../helpers/cli.js';
import { Cluster, nginxSkip, type Restart } from '../helpers/cluster.js';
import { sha256 } from '../helpers/downloads.js';
import { freshRedisPrefix, REDIS_TEST_URL, redisSkipReason } from '../helpers/redis.js';

/**
 * Several servers behind a load balancer (issue 10, items 4 and 6): Debian's nginx with
 * the recommended configuration (deploy/nginx/filehaven.conf) in front of filehaven servers
 * on one backend, used only through nginx. On postgres-s3 this is the fleet docs/scaling.md
 * recommends: one schema, one bucket, a data folder and a --server-name each. The rolling
 * restart is the point: every server in turn is taken out of nginx, gets SIGTERM under load
 * (its uploads in flight drain) and starts again, as the procedure in docs/scaling.md does it, and
 * no request may fail and no acknowledged upload may be lost.
 */
const SERVERS = TEST_BACKEND === 'postgres-s3' ? 3 : 2;
const MiB = 1024 * 1024;

/** The limits at their edges (the last test); the load of the rolling restart stays under all of them. */
const LOGIN_ATTEMPTS = 5;
const FREE_DOWNLOADS_PER_IP = 2;
const FREE_VOLUME = 3 * MiB;

/** Uploading clients and GET /account clients during the rolling restart. */
const UPLOADERS = 3;
const READERS = 2;
/** Bounds on each client's loop, whatever the restarts take. */
const MAX_UPLOADS_PER_CLIENT = 40;
const MAX_READS_PER_CLIENT = 1500;

let cluster: Cluster;
let key: string;

/** A response read to the end, or the error that ended the request. */
type Outcome = { status: number; headers: http.IncomingHttpHeaders; body: Buffer } | { error: string };

/**
 * One request through node:http on its own connection. `body` chunks are written with
 * `pauseMs` between them, so an upload is still arriving when a server gets its signal.
 */
function request(
  url: string,
  options: { method?: string; headers?: Record<string, string | number>; body?: Buffer[]; pauseMs?: number; localAddress?: string } = {},
): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false, localAddress: options.localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', (error) => resolve({ error: error.message }));
    });
    req.on('error', (error) => resolve({ error: error.message }));
    void (async () => {
      for (const chunk of options.body ?? []) {
        if (req.destroyed) return;
        req.write(chunk);
        if (options.pauseMs) await sleep(options.pauseMs);
      }
      req.end();
    })();
  });
}

const text = (outcome: Outcome) => ('error' in outcome ? outcome.error : `${outcome.status} ${outcome.body.toString('utf8')}`);
const entryId = (body: string) => /<entry>\s*<id>([^<]+)<\/id>/.exec(body)?.[1];

/** POST /files of `content` as the part "upload", in `chunk`-byte writes `pauseMs` apart. */
function upload(name: string, content: Buffer, chunk = content.length, pauseMs = 0, as = key): Promise<Outcome> {
  const boundary = `----cluster${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body: Buffer[] = [head];
  for (let at = 0; at < content.length; at += chunk) body.push(content.subarray(at, at + chunk));
  body.push(tail);
  return request(`${cluster.url}/files`, {
    method: 'POST',
    headers: { Authorization: as, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': head.length + content.length + tail.length },
    body,
    pauseMs,
  });
}

function api(method: string, path: string, form?: Record<string, string>, as = key): Promise<Outcome> {
  const body = form ? Buffer.from(new URLSearchParams(form).toString()) : undefined;
  return request(`${cluster.url}${path}`, {
    method,
    headers: { Authorization: as, ...(body ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': body.length } : {}) },
    ...(body ? { body: [body] } : {}),
  });
}

/** The body of a response with this status, failing with what came instead. */
function expect(outcome: Outcome, status: number): string {
  assert.ok(!('error' in outcome) && outcome.status === status, `expected ${status}, got ${text(outcome)}`);
  return outcome.body.toString('utf8');
}

describe(`${SERVERS} servers behind nginx`, { skip: nginxSkip() || (await redisSkipReason()) }, () => {
  before(async () => {
    // One Redis for the fleet's shared limits, as the environment in docs/scaling.md has it.
    const redisPrefix = freshRedisPrefix();
    cluster = await Cluster.start({
      servers: SERVERS,
      args: [
        '--login-attempts',
        String(LOGIN_ATTEMPTS),
        '--free-downloads-per-ip',
        String(FREE_DOWNLOADS_PER_IP),
        // Slow enough that a free download held open stays open, whatever the socket buffers hold.
        '--free-download-speed',
        '256KiB',
        '--upload-volume-free',
        String(FREE_VOLUME),
        // Every client comes through nginx from 127.0.0.1; the load must stay under the rates.
        '--api-rate-per-key',
        '100000',
        '--api-rate-per-ip',
        '100000',
      ],
      env: () => ({ FILEHAVEN_REDIS_URL: REDIS_TEST_URL, FILEHAVEN_REDIS_PREFIX: redisPrefix }),
    });
    assertOk(
      await runCli(['accounts', 'create', '--login', 'ada', '--password', 'correct horse', '--premium-days', '30', '--traffic', '10GiB'], cluster.cliEnv),
    );
    const made = await request(`${cluster.url}/apikeys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: [Buffer.from('login=ada&password=correct+horse')],
    });
    key = /<content type="text">([^<]+)</.exec(expect(made, 201))?.[1] ?? '';
    assert.ok(key, text(made));
  });
  after(() => cluster?.stop());

  test('the API through nginx: a key from one server works on all, uploads, copies, moves, details, direct downloads', async () => {
    // Requests go round-robin, so consecutive calls land on different servers.
    for (let i = 0; i < SERVERS * 2; i++) expect(await api('GET', '/account'), 200);

    const content = randomBytes(3 * MiB + 17);
    const uploaded = expect(await upload('report 2026.pdf', content, 256 * 1024), 201);
    const id = entryId(uploaded);
    assert.ok(id, uploaded);

    const copied = expect(await api('POST', `/files/copy/${id}`), 201);
    const copyId = entryId(copied);
    assert.ok(copyId && copyId !== id, copied);

    const folder = expect(await api('POST', '/folders', { name: 'Reports' }), 201);
    const folderId = entryId(folder);
    assert.ok(folderId, folder);
    const moved = expect(await api('PUT', `/folders/${folderId};files`, { 'files[0]': id, 'files[1]': copyId! }), 200);
    assert.match(moved, /<ed:updated>2<\/ed:updated>/);
    const listed = expect(await api('GET', `/folders/${folderId}`), 200);
    assert.ok(listed.includes(id!) && listed.includes(copyId!), listed);

    const details = expect(await api('GET', `/files/${copyId}`), 200);
    assert.match(details, /<ed:status>A<\/ed:status>/);

    // The direct link names nginx (--public-url), and nginx streams it byte for byte.
    const direct = expect(await api('GET', `/files/${copyId};DirectLink`), 200);
    const href = /<link href="([^"]+)" rel="enclosure"/.exec(direct)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(href, direct);
    assert.ok(href.startsWith(`${cluster.url}/direct/`), direct);
    const bytes = await request(href, { headers: { Authorization: key } });
    assert.ok(!('error' in bytes) && bytes.status === 200, text(bytes));
    assert.equal(sha256(bytes.body), sha256(content));
    // The id in the servers' logs is nginx's $request_id (32 hex digits, not the servers'
    // own UUIDs): they trust it because of --trust-proxy and the proxy_set_header line.
    assert.match(String(bytes.headers['x-request-id']), /^[0-9a-f]{32}$/);

    // What is for the machines inside stays inside.
    for (const path of ['/metrics', '/readyz']) {
      const inside = await request(`${cluster.url}${path}`);
      assert.ok(!('error' in inside) && inside.status === 403, `${path}: ${text(inside)}`);
    }
    const health = await request(`${cluster.url}/healthz`);
    assert.equal(expect(health, 200), 'ok\n');
  });

  test('a rolling restart under load fails no request and loses no acknowledged upload; gc from the CLI runs meanwhile', async (t) => {
    let done = false;
    const acknowledged: Array<{ id: string; link: string; digest: string }> = [];
    const failures: string[] = [];
    const counts = { uploads: 0, reads: 0, restarts: 0 };

    const uploader = async (client: number) => {
      for (let n = 0; !done && n < MAX_UPLOADS_PER_CLIENT; n++) {
        // 2 to 4 MiB in 64 KiB writes 50 ms apart: each upload is in flight for two to
        // three seconds, longer than a restart waits between nginx's reload and the signal,
        // so some are mid-body when the signal comes.
        const content = randomBytes(2 * MiB + Math.floor(Math.random() * 2 * MiB));
        const outcome = await upload(`load-${client}-${n}.bin`, content, 64 * 1024, 50);
        counts.uploads++;
        if ('error' in outcome || outcome.status !== 201) {
          failures.push(`upload ${client}-${n}: ${text(outcome).slice(0, 300)}`);
          continue;
        }
        const body = outcome.body.toString('utf8');
        const link = /title="download_link" href="([^"]+)"/.exec(body)?.[1];
        const id = entryId(body);
        if (!id || !link) failures.push(`upload ${client}-${n}: 201 without an id or link: ${body}`);
        else acknowledged.push({ id, link: link.replace(/&amp;/g, '&'), digest: sha256(content) });
      }
    };
    const reader = async (client: number) => {
      for (let n = 0; !done && n < MAX_READS_PER_CLIENT; n++) {
        const outcome = await api('GET', '/account');
        counts.reads++;
        if ('error' in outcome || outcome.status !== 200) failures.push(`GET /account ${client}-${n}: ${text(outcome).slice(0, 300)}`);
        await sleep(10);
      }
    };
    const clients = [...Array.from({ length: UPLOADERS }, (_, i) => uploader(i)), ...Array.from({ length: READERS }, (_, i) => reader(i))];

    const restarts: Restart[] = [];
    let gc: Awaited<ReturnType<typeof runCli>> | undefined;
    try {
      await sleep(1000);
      for (let i = 0; i < SERVERS; i++) {
        restarts.push(await cluster.restart(i));
        counts.restarts++;
        // gc from the CLI, beside the servers and their uploads in flight, once the first is back.
        if (i === 0) gc = await runCli(['gc', '--wait', '--json'], cluster.cliEnv);
      }
      await sleep(1000);
    } finally {
      done = true;
      await Promise.all(clients);
    }

    const proxied = await cluster.requests();
    const retried = proxied.filter((r) => r.upstreams.length > 1).length;
    // Uploads the signalled server was still receiving or answering when its signal came:
    // what draining is for.
    const drained = proxied.filter(
      (r) => r.method === 'POST' && restarts.some((s) => r.upstreams.at(-1) === s.upstream && r.start < s.signalledAt && r.end > s.signalledAt),
    ).length;
    const report =
      `${counts.uploads} uploads (${acknowledged.length} acknowledged, ${drained} in flight on the signalled server at its SIGTERM), ` +
      `${counts.reads} GET /account, ${counts.restarts} restarts; ${failures.length} failed; ` +
      `nginx passed ${retried} requests on to the next server (refused connects)`;
    t.diagnostic(report);
    console.log(`cluster (${TEST_BACKEND}, ${SERVERS} servers): ${report}`);

    assert.deepEqual(
      failures,
      [],
      `no request fails:\n${(await cluster.errorLog())
        .split('\n')
        .filter((line) => !line.includes('[notice]'))
        .slice(-30)
        .join('\n')}`,
    );
    assert.deepEqual(
      restarts.map((r) => r.exit),
      Array.from({ length: SERVERS }, () => ({ code: 0, signal: null })),
      'every server drained and exited 0',
    );
    assert.ok(gc, 'gc ran');
    const gcReport = JSON.parse(assertOk(gc));
    assert.equal(gcReport.dryRun, false);
    assert.ok(acknowledged.length >= UPLOADERS, `the uploaders got through (${acknowledged.length})`);

    // Every acknowledged upload is there, byte for byte, whichever server took it (by its
    // direct link: free downloads run at the capped speed of the slot test).
    for (const file of acknowledged) {
      const direct = expect(await api('GET', `/files/${file.id};DirectLink`), 200);
      const href = /<link href="([^"]+)" rel="enclosure"/.exec(direct)![1]!.replace(/&amp;/g, '&');
      const bytes = await request(href, { headers: { Authorization: key } });
      assert.ok(!('error' in bytes) && bytes.status === 200, `${file.id}: ${text(bytes).slice(0, 300)}`);
      assert.equal(sha256(bytes.body), file.digest, `${file.id} byte for byte`);
    }
    // And nothing else: a cut upload left no file (the first test's upload and copy aside).
    const stats = JSON.parse(assertOk(await runCli(['stats', '--json'], cluster.cliEnv)));
    assert.equal(stats.files.active.count, acknowledged.length + 2, 'one file per acknowledged upload');
  });

  test('every limit at its edge through nginx: the fleet allows exactly what one server would', async () => {
    const signIn = (login: string, password: string, localAddress?: string) =>
      request(`${cluster.url}/apikeys`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: [Buffer.from(new URLSearchParams({ login, password }).toString())],
        localAddress,
      });
    const accountKey = async (login: string, extra: string[]) => {
      assertOk(await runCli(['accounts', 'create', '--login', login, '--password', 'correct horse', ...extra], cluster.cliEnv));
      return /<content type="text">([^<]+)</.exec(expect(await signIn(login, 'correct horse'), 201))![1]!;
    };

    // Upload volume (the database): parallel uploads of a free account, round-robin over
    // the servers, never pass it; filled up one by one, it ends at floor(limit / size).
    const bob = await accountKey('bob', []);
    const uploadAs = (name: string) => upload(name, randomBytes(MiB), MiB, 0, bob);
    const burst = await Promise.all(Array.from({ length: 6 }, (_, i) => uploadAs(`burst-${i}.bin`)));
    let stored = burst.filter((o) => !('error' in o) && o.status === 201).length;
    for (const o of burst) assert.ok(!('error' in o) && (o.status === 201 || o.status === 429), text(o).slice(0, 300));
    assert.ok(stored >= 1 && stored <= 3, `${stored} uploads of 1 MiB against 3 MiB`);
    for (let i = 0; stored < 3; i++, stored++) expect(await uploadAs(`fill-${i}.bin`), 201);
    for (let i = 0; i < SERVERS; i++) assert.match(expect(await uploadAs(`over-${i}.bin`), 429), /errorUploadLimit/);

    // Premium traffic (the database): parallel direct downloads spread by nginx never
    // spend more than there is; exactly two of 1 MiB fit in 2.5 MiB.
    const carol = await accountKey('carol', ['--premium-days', '30', '--traffic', String(2.5 * MiB)]);
    const file = entryId(expect(await upload('carol.bin', randomBytes(MiB), MiB, 0, carol), 201))!;
    const direct = expect(await api('GET', `/files/${file};DirectLink`, undefined, carol), 200);
    const href = /<link href="([^"]+)" rel="enclosure"/.exec(direct)![1]!.replace(/&amp;/g, '&');
    const downloads = await Promise.all(Array.from({ length: 6 }, () => request(href, { headers: { Authorization: carol } })));
    const served = downloads.filter((o) => !('error' in o) && o.status === 200);
    for (const o of downloads) assert.ok(!('error' in o) && (o.status === 200 || o.status === 403), text(o).slice(0, 300));
    assert.equal(served.length, 2, `${served.length} of 6 direct downloads of 1 MiB on 2.5 MiB of traffic`);
    for (const o of served) assert.equal((o as { body: Buffer }).body.length, MiB);

    // Free-download slots (Redis): two held open through nginx, on two servers, fill the
    // address's slots; a third is refused whichever server nginx picks.
    // 8 MiB at the capped 256 KiB/s: open for half a minute.
    const big = expect(await upload('slots.bin', randomBytes(8 * MiB)), 201);
    const url = `${/title="download_link" href="([^"]+)"/.exec(big)![1]!}?download=1`;
    const held: http.ClientRequest[] = [];
    const hold = () =>
      new Promise<number>((resolve, reject) => {
        const req = http.get(url, { agent: false }, (res) => {
          res.pause();
          if (res.statusCode !== 200) res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
        held.push(req);
      });
    try {
      assert.deepEqual([await hold(), await hold()], [200, 200]);
      for (let i = 0; i < SERVERS; i++) assert.equal(await hold(), 429, 'every slot of the address is taken, on every server');
    } finally {
      for (const req of held) req.destroy();
    }

    // Failed sign-ins (Redis): round-robin over the servers, the limit is the fleet's.
    // From an address of their own (the counters' minute starts at an address's first
    // attempt: from 127.0.0.1, the sign-ins at the top of this test, which may be a minute
    // ago on a slow run, and then the counter starts over in the middle of this).
    const guesser = '127.0.0.2';
    for (let i = 0; i < LOGIN_ATTEMPTS; i++) assert.match(expect(await signIn('bob', 'wrong', guesser), 401), /errorWrongCredentials/);
    for (let i = 0; i < SERVERS; i++) assert.match(expect(await signIn('bob', 'correct horse', guesser), 429), /errorWrongCredentials/);
  });
});
