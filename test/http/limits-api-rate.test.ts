import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, type ReadResponse, read } from '../helpers/api-checks.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

// The request rate of API clients per API key and per client address (config
// apiRatePerKey, apiRatePerIp): errorRateLimited (429) in the Atom error shape with
// Retry-After. Web pages, downloads and /healthz are not API routes.

const RATE = 5;

/** 429 errorRateLimited in the Atom shape, with a Retry-After within the minute. */
function expectRateLimited(response: ReadResponse): void {
  assertAtomError(response, 429, 'errorRateLimited');
  const retryAfter = Number(response.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${response.headers.get('retry-after')}`);
}

describe('per API key', () => {
  let t: TestServer;
  let ada: TestAccount;
  let bob: TestAccount;
  before(async () => {
    t = await startTestServer({ apiRatePerKey: RATE, apiRatePerIp: 0 });
    ada = await t.account();
    bob = await t.account();
  });
  after(() => t.close());

  const account = (key: string) => t.fetch('/account', { headers: { Authorization: key } }).then(read);

  test(`the ${RATE + 1}th request of a minute with one key is refused; other keys go on`, async () => {
    for (let i = 0; i < RATE; i++) assert.equal((await account(ada.key)).status, 200);
    expectRateLimited(await account(ada.key));
    // Every API route counts against the key, and stays refused.
    expectRateLimited(await t.fetch('/folders', { method: 'POST', headers: { Authorization: ada.key }, body: new URLSearchParams({ name: 'x' }) }).then(read));
    const upload = await t.upload(ada.key, 'a.txt', 'hello');
    expectRateLimited({ status: upload.response.status, headers: upload.response.headers, body: upload.body });
    assert.equal((await account(bob.key)).status, 200);
  });

  test('unknown keys are counted too, before they are looked up', async () => {
    const madeUp = 'Z'.repeat(32);
    for (let i = 0; i < RATE; i++) assertAtomError(await account(madeUp), 401, 'errorPermissionDenied');
    expectRateLimited(await account(madeUp));
  });

  test('requests without a key are not limited per key (0 = unlimited per address)', async () => {
    for (let i = 0; i < RATE * 3; i++) assertAtomError(await t.fetch('/account').then(read), 401, 'errorPermissionDenied');
  });
});

describe('per client address', () => {
  let t: TestServer;
  let ada: TestAccount;
  let bob: TestAccount;
  let downloadLink: string;
  before(async () => {
    t = await startTestServer({ apiRatePerKey: 0, apiRatePerIp: RATE, trustProxy: true });
    ada = await t.account();
    bob = await t.account();
    const up = await t.upload(ada.key, 'page.txt', 'a public file');
    assert.equal(up.response.status, 201, up.body);
    downloadLink = up.downloadLink;
  });
  after(() => t.close());

  const from = (ip: string, pathname: string, init: RequestInit = {}) =>
    t.fetch(pathname, { ...init, headers: { ...(init.headers as Record<string, string>), 'X-Forwarded-For': ip } }).then(read);

  test(`the ${RATE + 1}th API request of a minute from one address is refused, whatever the key`, async () => {
    const ip = '10.8.0.1';
    for (let i = 0; i < RATE; i++) {
      const key = i % 2 === 0 ? ada.key : bob.key;
      assert.equal((await from(ip, '/account', { headers: { Authorization: key } })).status, 200);
    }
    expectRateLimited(await from(ip, '/account', { headers: { Authorization: bob.key } }));
    expectRateLimited(await from(ip, '/apikeys', { method: 'POST', body: new URLSearchParams({ login: ada.login, password: ada.password }) }));
    expectRateLimited(await from(ip, '/files/NOSUCHFILE', { headers: { Authorization: ada.key } }));
    // Another address is not affected.
    assert.equal((await from('10.8.0.2', '/account', { headers: { Authorization: ada.key } })).status, 200);
  });

  test('web pages, downloads and /healthz are not API routes', async () => {
    const ip = '10.8.1.1';
    for (let i = 0; i < RATE; i++) assert.equal((await from(ip, '/account', { headers: { Authorization: ada.key } })).status, 200);
    expectRateLimited(await from(ip, '/account', { headers: { Authorization: ada.key } }));
    const healthz = await from(ip, '/healthz');
    assert.equal(healthz.status, 200);
    for (const pathname of ['/', '/developers', new URL(downloadLink).pathname, `${new URL(downloadLink).pathname}?download=1`]) {
      const response = await from(ip, pathname);
      assert.equal(response.status, 200, `${pathname}: ${response.status}`);
    }
  });
});

describe('paths that only look different', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ apiRatePerKey: 0, apiRatePerIp: RATE });
  });
  after(() => t.close());

  test('percent-encoded and absolute-form targets are counted like the plain path', async () => {
    const { port } = new URL(t.url);
    const raw = (target: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = http.request({ host: '127.0.0.1', port: Number(port), path: target, method: 'GET' }, (response) => {
          let body = '';
          response.on('data', (d: Buffer) => (body += d));
          response.on('end', () => resolve({ status: response.statusCode!, body }));
        });
        request.on('error', reject);
        request.end();
      });
    const answers = [];
    for (const target of ['/%61ccount', `http://example.test/account`, '/%61ccount', '/account', `http://example.test/account`, '/%61ccount']) {
      answers.push(await raw(target));
    }
    assert.deepEqual(
      answers.map((a) => a.status),
      [401, 401, 401, 401, 401, 429],
    );
    // An absolute-form target still gets its path as the feed id and self link.
    assert.match(answers[1]!.body, new RegExp(`<id>${t.url}/account</id>`));
    assert.match(answers[1]!.body, /<link rel="self" href="\/account"\/>/);
  });
});
