import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { openServices, type Services } from '../../src/composition.js';
import { loadConfig } from '../../src/config/config.js';
import { assertFails, assertOk, runCli } from '../helpers/cli.js';

// `filehaven accounts reset-second-factor`: the operator's way back in for someone who lost
// both the phone and the recovery codes (issue 26), through the console's use case, audited.

let data: string;
let services: Services;
const accounts = (...args: string[]) => runCli(['accounts', ...args, '--data', data]);

before(async () => {
  data = await mkdtemp(path.join(tmpdir(), 'filehaven-2fa-cli-'));
  services = await openServices(loadConfig({ data }, {}), { log: () => {} });
});
after(async () => {
  await services?.close();
  await rm(data, { recursive: true, force: true });
});

test('reset-second-factor removes TOTP and recovery codes, audited as cli:<user>; a second run changes nothing', async () => {
  const account = await services.accounts.create({ login: 'ada', password: 'ada password' });
  const setup = await services.secondFactors.begin(account, 'example.org');
  const code = TOTP.generate({ secret: Secret.fromBase32(setup!.secret), algorithm: 'SHA1', digits: 6, period: 30 });
  assert.equal((await services.secondFactors.confirm(account, code, setup!.sealed, 'test'))?.length, 10);
  assert.equal((await services.secondFactors.status(account.id)).totp, 'on');

  assert.match(assertOk(await accounts('reset-second-factor', '--login', 'ada')), /^removed two-step verification \(TOTP and recovery codes\) of "ada"/m);
  assert.deepEqual(await services.secondFactors.status(account.id), { totp: 'off', recoveryCodesLeft: 0 });
  const entries = await services.audit.list({ limit: 10, action: 'accounts.reset-second-factor' });
  assert.equal(entries.length, 1);
  assert.equal(entries[0]?.actor, `cli:${userInfo().username}`);
  assert.equal(entries[0]?.object, 'account:ada');

  assert.match(assertOk(await accounts('reset-second-factor', '--login', 'ada')), /"ada" has no two-step verification; nothing changed/);
  assert.equal((await services.audit.list({ limit: 10, action: 'accounts.reset-second-factor' })).length, 1, 'nothing to audit');
});

test('reset-second-factor: an unknown login fails, a missing --login is a usage mistake, help describes it', async () => {
  assertFails(await accounts('reset-second-factor', '--login', 'nobody'), 1, /nobody|does not exist|no account/i);
  assertFails(await accounts('reset-second-factor'), 2, /--login is required/);
  assert.match(assertOk(await runCli(['help', 'accounts', 'reset-second-factor'])), /--login L[\s\S]*two-step verification/);
});
