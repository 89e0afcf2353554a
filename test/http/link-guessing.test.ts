// Guessing a link's password at scale (issue 25, "Bad input and faults": 10,000 wrong
// guesses from one address and from many; `npm run test:deep` sends that many,
// `npm test` 1,000 of each, FILEHAVEN_LINK_GUESSES sets it). The throttle's rules are tested with small
// numbers in shares-download.test.ts and upload-requests-use.test.ts; this sends the
// volumes of the issue, and checks what an attacker gets out of them: no more checked
// guesses than the budgets allow, never the bytes, never the request's contents, and a
// server that still answers its owner.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { form, read } from '../helpers/api-checks.js';
import { cheapPasswordHash, startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

/** Guesses per flood: the 10,000 in test:deep. */
const GUESSES = Number(process.env.FILEHAVEN_LINK_GUESSES ?? 1_000);
/** Guesses in flight at once. */
const PARALLEL = 16;
/** loginAttemptsPerMinute: the budget per address; per link it is ten times that (limits.ts). */
const PER_ADDRESS = 10;
const PER_LINK = PER_ADDRESS * 10;

let t: TestServer;
let owner: TestAccount;

before(async () => {
  // The API rate per address is another limit (and would refuse the flood first).
  t = await startTestServer({ loginAttemptsPerMinute: PER_ADDRESS, trustProxy: true, apiRatePerIp: 0 });
  owner = await t.account();
});
after(() => t.close());

const created = async (path: string, fields: Record<string, string>): Promise<string> => {
  const response = await read(await t.fetch(path, { method: 'POST', headers: { Authorization: owner.key }, body: form(fields) }));
  assert.equal(response.status, 201, response.body);
  return /<entry>\s*<id>([A-Za-z0-9]{22})<\/id>/.exec(response.body)![1]!;
};

/**
 * The link's password stored again at a lower scrypt work factor (helpers/server.ts): the
 * floods check the budgets around each check, not its cost, and the 210 checks at the
 * production factor were most of this file's CPU. verifyPassword reads the factor from the
 * hash, so every check still runs the production code, right password and wrong alike.
 */
async function cheapenPassword(link: { share: string } | { request: string }, password: string): Promise<void> {
  const passwordHash = await cheapPasswordHash(password);
  const { shares, uploadRequests } = t.server.services.store;
  const changed =
    'share' in link ? await shares.change(link.share, owner.account.id, { passwordHash }) : await uploadRequests.change(link.request, { passwordHash });
  assert.ok(changed, 'the link is there to change');
}

/** Sends `count` guesses, PARALLEL at a time; returns how many got each status and the bodies' distinct texts. */
async function flood(count: number, send: (i: number) => Promise<Response>): Promise<{ statuses: Map<number, number>; bodies: Set<string>; minutes: number }> {
  const started = Date.now();
  const statuses = new Map<number, number>();
  const bodies = new Set<string>();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const response = await read(await send(i));
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      bodies.add(response.body.replace(/<updated>[^<]*<\/updated>/, '').replace(/<id>[^<]*<\/id>/, ''));
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  // The counters are per minute: a run longer than one (a slow machine) may have had one more budget per minute begun.
  return { statuses, bodies, minutes: Math.floor((Date.now() - started) / 60_000) + 1 };
}

describe(`${GUESSES} wrong passwords`, () => {
  test('from one address: only its budget is ever checked, then 429; the bytes never leave; others still get in', async () => {
    const file = await t.upload(owner.key, 'guarded.txt', 'the guarded bytes');
    const id = await created('/shares', { file: file.id, password: 'the right one' });
    await cheapenPassword({ share: id }, 'the right one');
    const { statuses, bodies, minutes } = await flood(GUESSES, (i) =>
      t.fetch(`/s/${id}/download`, { headers: { 'Filehaven-Share-Password': `wrong ${i}`, 'X-Forwarded-For': '198.51.100.7' } }),
    );
    const checked = statuses.get(401) ?? 0;
    assert.ok(checked >= PER_ADDRESS && checked <= PER_ADDRESS * minutes, `401s: ${checked}`);
    assert.equal(statuses.get(429), GUESSES - checked, [...statuses].join(' '));
    assert.equal(statuses.size, 2, [...statuses].join(' '));
    for (const body of bodies) assert.ok(!body.includes('the guarded bytes') && !body.includes('guarded.txt'), body);
    // The right password from that address waits too; from another it opens the share.
    assert.equal(
      (await t.fetch(`/s/${id}/download`, { headers: { 'Filehaven-Share-Password': 'the right one', 'X-Forwarded-For': '198.51.100.7' } })).status,
      429,
    );
    const right = await t.fetch(`/s/${id}/download`, { headers: { 'Filehaven-Share-Password': 'the right one', 'X-Forwarded-For': '198.51.100.8' } });
    assert.equal(right.status, 200);
    assert.equal(await right.text(), 'the guarded bytes');
    assert.equal((await t.server.services.store.shares.byId(id))!.downloads, 1, 'only the right one counted');
    // The owner's API is unaffected.
    assert.equal((await t.fetch(`/shares/${id}`, { headers: { Authorization: owner.key } })).status, 200);
  });

  test("from as many addresses: the link's own budget ends them, for a share and for an upload request", async () => {
    const file = await t.upload(owner.key, 'guarded 2.txt', 'more guarded bytes');
    const shareId = await created('/shares', { file: file.id, password: 'the right one' });
    await cheapenPassword({ share: shareId }, 'the right one');
    const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const shares = await flood(GUESSES, (i) =>
      t.fetch(`/s/${shareId}/download`, { headers: { 'Filehaven-Share-Password': `wrong ${i}`, 'X-Forwarded-For': address(i) } }),
    );
    const checked = shares.statuses.get(401) ?? 0;
    assert.ok(checked >= PER_LINK && checked <= PER_LINK * shares.minutes, `401s: ${checked}`);
    assert.equal(shares.statuses.get(429), GUESSES - checked);

    // An upload request: the guesses come with a file each, and none is ever stored.
    const requestId = await created('/requests', { password: 'the right one', title: 'Inbox' });
    await cheapenPassword({ request: requestId }, 'the right one');
    const files = async () => (await t.server.services.store.files.list({ ownerId: owner.account.id, limit: 500 })).length;
    const before = await files();
    const requests = await flood(GUESSES, (i) => {
      const body = new FormData();
      body.append('upload', new Blob([`guess ${i}`]), `guess ${i}.txt`);
      return t.fetch(`/r/${requestId}`, {
        method: 'POST',
        body,
        headers: { 'Filehaven-Share-Password': `wrong ${i}`, 'X-Forwarded-For': address(GUESSES + i) },
      });
    });
    const requestChecked = requests.statuses.get(401) ?? 0;
    assert.ok(requestChecked >= PER_LINK && requestChecked <= PER_LINK * requests.minutes, `401s: ${requestChecked}`);
    assert.equal(requests.statuses.get(429), GUESSES - requestChecked);
    for (const body of requests.bodies) assert.ok(!body.includes('Inbox'), body);
    assert.equal(await files(), before, 'no guess stored a file');
    const request = await t.server.services.store.uploadRequests.byId(requestId);
    assert.equal(request?.files, 0);
  });
});
