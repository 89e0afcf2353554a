import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bodyBytes, directLink, trafficLeft } from '../helpers/downloads.js';
import { atomError, startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';

// Issue 14: a direct-link token `<expiry>.<account>.<sig>` has one spelling. Number() reads
// `0<expiry>` or `0<account>` as the same numbers, so the signature would still verify;
// such a token must be refused exactly like a forged one (API.md 6: errorFileNotFound).

const GiB = 1024 ** 3;

/** What a client can see of an answer; the token in the error feed's id and self link is a slot. */
async function answer(response: Response, token: string) {
  const body = (await bodyBytes(response)).toString('utf8');
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    contentDisposition: response.headers.get('content-disposition'),
    error: atomError(body),
    body: body.split(token).join('{token}'),
  };
}

/** A premium account, one file and its direct URL split into the token and the rest. */
async function linked(t: TestServer) {
  const owner = await t.account({ premiumDays: 30, trafficBytes: GiB });
  const up = await t.upload(owner.key, 'spelled.bin', 'canonical bytes');
  assert.equal(up.response.status, 201, up.body);
  const url = await directLink(t, owner.key, up.id);
  const token = new URL(url).pathname.split('/')[3]!; // ['', 'direct', id, token, name]
  const [expiry, account, signature] = token.split('.') as [string, string, string];
  assert.match(token, /^[1-9]\d*\.[1-9]\d*\.[A-Za-z0-9_-]+$/, 'directLink writes the canonical form');
  const withToken = (other: string) => url.replace(`/${token}/`, `/${other}/`);
  const forged = `${expiry}.${account}.${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
  const respellings = [
    `0${expiry}.${account}.${signature}`,
    `${expiry}.0${account}.${signature}`,
    `0${expiry}.0${account}.${signature}`,
    `00${expiry}.00${account}.${signature}`,
  ];
  return { owner, url, withToken, forged, respellings };
}

for (const requiresKey of [true, false]) {
  describe(`a re-spelled direct-link token (--direct-link-requires-key ${requiresKey})`, () => {
    let t: TestServer;
    before(async () => {
      // A fixed clock: the error feeds' <updated> lines must match too.
      t = await startTestServer({ directLinkRequiresKey: requiresKey }, new TestClock());
    });
    after(() => t.close());

    const headers = (owner: TestAccount): Record<string, string> => (requiresKey ? { Authorization: owner.key } : {});

    test('gets the forged-token answer, byte for byte, and charges nothing', async () => {
      const { owner, url, withToken, forged, respellings } = await linked(t);
      const expected = await answer(await fetch(withToken(forged), { headers: headers(owner) }), forged);
      assert.equal(expected.status, 404);
      assert.equal(expected.error?.code, 'errorFileNotFound', expected.body);
      for (const token of respellings) {
        assert.deepEqual(await answer(await fetch(withToken(token), { headers: headers(owner) }), token), expected, token);
      }
      assert.equal(await trafficLeft(t, owner.key), GiB);
      // The link as issued still works.
      const ok = await fetch(url, { headers: headers(owner) });
      assert.equal(ok.status, 200);
      assert.equal((await bodyBytes(ok)).toString(), 'canonical bytes');
    });

    test('HEAD answers like the forged token too', async () => {
      const { owner, withToken, forged, respellings } = await linked(t);
      const expected = await fetch(withToken(forged), { method: 'HEAD', headers: headers(owner) });
      assert.equal(expected.status, 404);
      for (const token of respellings) {
        const response = await fetch(withToken(token), { method: 'HEAD', headers: headers(owner) });
        assert.equal(response.status, expected.status, token);
        assert.equal(response.headers.get('content-type'), expected.headers.get('content-type'), token);
      }
    });
  });
}
