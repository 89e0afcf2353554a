import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, type ReadResponse, read } from '../helpers/api-checks.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// The brute-force limit of POST /apikeys (API.md 8: attempts per IP and per login, 10 a
// minute; errorWrongCredentials with 429). Several client addresses are simulated with
// X-Forwarded-For behind a trusted proxy.

const LIMIT = 3;
const PASSWORD = 'correct horse battery';

let t: TestServer;
before(async () => {
  t = await startTestServer({ loginAttemptsPerMinute: LIMIT, trustProxy: true });
});
after(() => t.close());

let counter = 0;
/** A fresh account; its login only. */
async function account(): Promise<string> {
  const login = `signin${++counter}`;
  await t.server.services.accounts.create({ login, password: PASSWORD });
  return login;
}

function signIn(login: string, password: string, ip: string): Promise<ReadResponse> {
  return t.fetch('/apikeys', { method: 'POST', headers: { 'X-Forwarded-For': ip }, body: new URLSearchParams({ login, password }) }).then(read);
}

const expectKey = (response: ReadResponse) => assert.equal(response.status, 201, response.body);
const expectWrong = (response: ReadResponse) => assertAtomError(response, 401, 'errorWrongCredentials', 'Invalid login or password');

/** 429 errorWrongCredentials with a Retry-After within the minute. */
function expectLocked(response: ReadResponse): void {
  assertAtomError(response, 429, 'errorWrongCredentials');
  const retryAfter = Number(response.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${response.headers.get('retry-after')}`);
}

describe('sign-in attempts', () => {
  test(`after ${LIMIT} failures from one address, it is refused with 429, the right password too, for every login`, async () => {
    const ada = await account();
    const bob = await account();
    for (let i = 0; i < LIMIT; i++) expectWrong(await signIn(ada, 'not the password', '10.1.0.1'));
    expectLocked(await signIn(ada, PASSWORD, '10.1.0.1'));
    // Per address: another login from there is refused as well...
    expectLocked(await signIn(bob, PASSWORD, '10.1.0.1'));
    // ...while other addresses are not affected, and bob's login is not locked.
    expectKey(await signIn(bob, PASSWORD, '10.1.0.2'));
  });

  test('unknown logins count like wrong passwords', async () => {
    for (let i = 0; i < LIMIT; i++) expectWrong(await signIn(`nobody${i}`, PASSWORD, '10.5.0.1'));
    expectLocked(await signIn(await account(), PASSWORD, '10.5.0.1'));
  });

  test(`after ${LIMIT} failures against one login from many addresses, that login is refused at every new address`, async () => {
    const carol = await account();
    const dave = await account();
    for (let i = 1; i <= LIMIT; i++) expectWrong(await signIn(carol, 'guess', `10.2.0.${i}`));
    expectLocked(await signIn(carol, PASSWORD, '10.2.0.99'));
    // Case and blanks do not make another login.
    expectLocked(await signIn(` ${carol.toUpperCase()} `, PASSWORD, '10.2.0.98'));
    // The address itself is fine for other logins.
    expectKey(await signIn(dave, PASSWORD, '10.2.0.99'));
  });

  test('guesses from elsewhere never lock a login out of an address it signed in from (issue 7)', async () => {
    const ines = await account();
    expectKey(await signIn(ines, PASSWORD, '10.8.0.1'));
    // An attacker fills the login's counter from addresses ines never used...
    for (let i = 1; i <= LIMIT; i++) expectWrong(await signIn(ines, 'guess', `10.8.1.${i}`));
    expectLocked(await signIn(ines, PASSWORD, '10.8.1.99'));
    // ...and ines, at home, still signs in, again and again.
    expectKey(await signIn(ines, PASSWORD, '10.8.0.1'));
    expectKey(await signIn(ines, PASSWORD, '10.8.0.1'));
    // A known address is no free pass for guessing: its own counter still holds.
    for (let i = 0; i < LIMIT; i++) expectWrong(await signIn(ines, 'guess', '10.8.0.1'));
    expectLocked(await signIn(ines, PASSWORD, '10.8.0.1'));
  });

  test('an address is known per login', async () => {
    const jack = await account();
    const kate = await account();
    expectKey(await signIn(jack, PASSWORD, '10.9.0.1'));
    for (let i = 1; i <= LIMIT; i++) expectWrong(await signIn(kate, 'guess', `10.9.1.${i}`));
    // jack's address is no exemption for kate's login.
    expectLocked(await signIn(kate, PASSWORD, '10.9.0.1'));
  });

  test('successful sign-ins do not count', async () => {
    const erin = await account();
    for (let i = 0; i < LIMIT * 2; i++) expectKey(await signIn(erin, PASSWORD, '10.3.0.1'));
    // Failures still have their full allowance.
    for (let i = 0; i < LIMIT; i++) expectWrong(await signIn(erin, 'nope', '10.3.0.1'));
    expectLocked(await signIn(erin, PASSWORD, '10.3.0.1'));
  });

  test('parallel guesses cannot overtake the limit', async () => {
    const frank = await account();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => signIn(frank, `guess-${i}`, '10.4.0.1')));
    const wrong = answers.filter((a) => a.status === 401);
    const locked = answers.filter((a) => a.status === 429);
    assert.equal(wrong.length, LIMIT, answers.map((a) => a.status).join(','));
    assert.equal(locked.length, 12 - LIMIT);
    for (const a of wrong) expectWrong(a);
    for (const a of locked) expectLocked(a);
  });

  test('an IPv6 client counts by its /64', async () => {
    const gina = await account();
    for (let i = 1; i <= LIMIT; i++) expectWrong(await signIn(`nobody-v6-${i}`, 'x', `2001:db8:1:2::${i}`));
    expectLocked(await signIn(gina, PASSWORD, '2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expectKey(await signIn(gina, PASSWORD, '2001:db8:1:3::1'));
  });

  test('a client cannot forge its address through the proxy: only the address the proxy adds counts', async () => {
    const hugo = await account();
    // The proxy appends the address it saw to whatever the client sent.
    for (let i = 1; i <= LIMIT; i++) expectWrong(await signIn(`nobody-forged-${i}`, 'x', `192.0.2.${i}, 10.7.0.1`));
    expectLocked(await signIn(hugo, PASSWORD, '192.0.2.200, 10.7.0.1'));
    expectKey(await signIn(hugo, PASSWORD, '10.7.0.2'));
  });

  test('without a trusted proxy, X-Forwarded-For is ignored', async () => {
    const other = await startTestServer({ loginAttemptsPerMinute: LIMIT });
    try {
      const login = 'noproxy';
      await other.server.services.accounts.create({ login, password: PASSWORD });
      const attempt = (ip: string, password: string) =>
        other.fetch('/apikeys', { method: 'POST', headers: { 'X-Forwarded-For': ip }, body: new URLSearchParams({ login: `x-${ip}`, password }) }).then(read);
      for (let i = 1; i <= LIMIT; i++) expectWrong(await attempt(`10.6.0.${i}`, 'x'));
      // All came from 127.0.0.1, whatever the header said.
      const locked = await other
        .fetch('/apikeys', { method: 'POST', headers: { 'X-Forwarded-For': '10.6.0.50' }, body: new URLSearchParams({ login, password: PASSWORD }) })
        .then(read);
      expectLocked(locked);
    } finally {
      await other.close();
    }
  });
});
