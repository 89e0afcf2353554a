import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runKeepAliveLoad } from '../helpers/keep-alive-load.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Many keep-alive clients behind one address (issue 23, defect 7): an office behind NAT,
 * a backup job with many workers. At the per-address connection cap the server used to
 * destroy an idle keep-alive socket to admit a new one, and a client reusing that socket
 * at the same instant got a reset (after a POST it cannot know whether its upload landed).
 * A limit now refuses in words (429 with Retry-After) or closes at a response boundary
 * (`Connection: close`), so a client only ever sees answers. Counted here: resets, broken
 * pipes, hang-ups (none allowed), statuses, a health probe's answers, and the uploads
 * against the file list. Mixed load (pages, small downloads, HEAD, uploads, /healthz)
 * through node:http Agents with keepAlive, from a process of their own; bounded by a
 * fixed number of requests per client.
 */
describe('many keep-alive clients behind one address', () => {
  const CAP = 64;
  const REQUESTS_PER_CLIENT = 3;
  let t: TestServer;
  let key: string;
  let page: string;
  before(async () => {
    // Only the connection cap may refuse here: the API rate and free-download limits
    // answer 429 too, and this test counts the cap's.
    t = await startTestServer({ maxConnectionsPerIp: CAP, apiRatePerIp: 0, apiRatePerKey: 0, freeDownloadsPerIp: 0 });
    key = (await t.account()).key;
    const up = await t.upload(key, 'small.txt', 'x'.repeat(2048));
    assert.equal(up.response.status, 201, up.body);
    page = new URL(up.downloadLink).pathname;
  });
  after(() => t.close());

  // CAP - 1: with the probe's connection (counted from its arrival until its request line
  // shows a probe, as any new connection is) they fill the cap and are never refused.
  for (const clients of [CAP - 1, CAP, 4 * CAP]) {
    it(`${clients} clients, cap ${CAP}: no reset, every request answered or refused with Retry-After, every upload accounted for`, async () => {
      const earlier = new Set((await t.storage.rows('files')).map((row) => String(row.id)));
      const outcome = await runKeepAliveLoad({
        baseUrl: t.url,
        key,
        page,
        download: `${page}?download=1`,
        clients,
        requestsPerClient: REQUESTS_PER_CLIENT,
      });
      const summary = JSON.stringify({ statuses: outcome.statuses, failures: outcome.failures, probes: outcome.probes });
      assert.deepEqual(outcome.failures, {}, `no reset, broken pipe or hang-up: ${summary}`);
      const answered = Object.values(outcome.statuses).reduce((sum, n) => sum + n, 0);
      assert.equal(answered, clients * REQUESTS_PER_CLIENT, summary);
      for (const label of Object.keys(outcome.statuses)) assert.match(label, /^(GET|HEAD) 200$|^POST 201$| 429$/, summary);
      assert.equal(outcome.bareRefusals, 0, `every 429 says when to retry: ${summary}`);
      // The probe's own connection is always let through, whatever the others hold.
      assert.deepEqual(Object.keys(outcome.probes), ['GET 200'], `every probe answered: ${summary}`);
      // Every upload answered 201 is in the file list, and nothing else landed.
      const landed = (await t.storage.rows('files')).map((row) => String(row.id)).filter((id) => !earlier.has(id));
      assert.deepEqual(landed.sort(), outcome.acknowledged.sort(), summary);
      // One socket per client and one for the probe: while they fit the cap, none is refused.
      const refusals = Object.keys(outcome.statuses).filter((label) => label.endsWith(' 429'));
      if (clients + 1 <= CAP) assert.deepEqual(refusals, [], summary);
      console.log(`${clients} clients: ${summary}`);
    });
  }
});
