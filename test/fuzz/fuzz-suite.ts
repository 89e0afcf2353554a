import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { ENDPOINTS } from '../../src/http/api/api-catalogue.js';
import { atomError } from '../helpers/server.js';
import { caseArb, type Family } from './arbitraries.js';
import { ATOM_TYPE, classifyTarget } from './checks.js';
import { CORPUS } from './corpus.js';
import { type Fixtures, prepareFixtures } from './fixtures.js';
import { type FuzzCase, HOST, printable } from './fuzz-case.js';
import { type FuzzConfig, familyPlan, fuzzConfig } from './fuzz-config.js';
import { FuzzSession, reportCase } from './harness.js';
import { type FuzzTarget, NO_LIMITS, type TargetFactory } from './targets.js';

/**
 * The HTTP fuzz suite (issue 7, "Fuzzing in the test suite"), for any backend: give it a
 * TargetFactory and it registers the seed corpus (corpus.ts), one property per family of
 * generators (arbitraries.ts), a final storage check, and a check that the rate limits
 * still answer Atom 429s.
 */

/**
 * Cases in `npm test` over all families; FILEHAVEN_FUZZ_RUNS scales it. `npm run test:deep`
 * runs 2,500 (the size of earlier releases), `npm run fuzz` 25,000 against one server.
 */
export const DEFAULT_RUNS = 800;
/**
 * Shrinking a counterexample sends requests too, so it is bounded: at most MAX_SHRINKS
 * steps, SHRINK_BUDGET_MS in all (after that every candidate passes and fast-check reports
 * the smallest failure found), and a shorter answer bound for candidates (a hang found at
 * 10 s shows in 3 s just as well), so a failing family reports in about a minute.
 */
const MAX_SHRINKS = 2_000;
const SHRINK_BUDGET_MS = 45_000;
const SHRINK_BOUND_MS = 3_000;

/** The message of a failing property, with what it takes to replay it. */
function replayHint(config: FuzzConfig, family: Family, error: unknown): Error {
  const { seed } = familyPlan(config, family);
  const path = /path: "([^"]*)"/.exec(String((error as Error).message))?.[1];
  const hint = [
    `fuzz family "${family}" failed. Replay: FILEHAVEN_FUZZ_SEED=${config.seed} FILEHAVEN_FUZZ_RUNS=${config.runs}`,
    `  or just this counterexample: FILEHAVEN_FUZZ_SEED=${config.seed} FILEHAVEN_FUZZ_FAMILY=${family}${path ? ` FILEHAVEN_FUZZ_PATH=${path}` : ''} (family seed ${seed})`,
    `  node scripts/run-tests.js test/fuzz/http-fuzz.test.ts`,
  ].join('\n');
  const wrapped = new Error(`${hint}\n\n${(error as Error).message}`);
  wrapped.stack = wrapped.message;
  return wrapped;
}

export function httpFuzzSuite(factory: TargetFactory, config: FuzzConfig = fuzzConfig(DEFAULT_RUNS)): void {
  describe('HTTP fuzz: every endpoint and page, random methods, targets, headers, bodies and framings', () => {
    let target: FuzzTarget;
    let fixtures: Fixtures;
    let session: FuzzSession;

    before(async () => {
      target = await factory(NO_LIMITS);
      fixtures = await prepareFixtures(target);
      session = new FuzzSession(target);
    });
    after(async () => {
      await target?.stop();
    });

    // The seed corpus first: what broke the property before, whatever the seed.
    for (const entry of CORPUS) {
      test(`corpus: ${entry.name}`, async () => {
        const c = entry.build(fixtures);
        const result = await session.run(c);
        if (result.violations.length > 0) assert.fail(reportCase(c, result.violations, result.exchange));
      });
    }

    for (const family of config.families) {
      const plan = familyPlan(config, family);
      test(`${family}: ${plan.numRuns} requests (seed ${plan.seed}): the server stays up, answers in time, API paths answer Atom, no 5xx, no internals`, {
        timeout: 30 * 60_000,
      }, async (t) => {
        t.diagnostic(`FILEHAVEN_FUZZ_SEED=${config.seed} (family ${family}: seed ${plan.seed}, ${plan.numRuns} runs) against ${target.name}`);
        let firstFailure: number | undefined;
        const property = fc.asyncProperty(fc.limitShrink(caseArb(family, fixtures), MAX_SHRINKS), async (c) => {
          if (firstFailure !== undefined && Date.now() - firstFailure > SHRINK_BUDGET_MS) return;
          const result = await session.run(c, firstFailure === undefined ? {} : { boundMs: SHRINK_BOUND_MS });
          if (result.violations.length > 0) {
            firstFailure ??= Date.now();
            throw new Error(reportCase(c, result.violations, result.exchange));
          }
        });
        try {
          await fc.assert(property, {
            seed: plan.seed,
            numRuns: plan.numRuns,
            ...(config.path && config.families.length === 1 ? { path: config.path, endOnFailure: true } : {}),
            includeErrorInReport: true,
          });
        } catch (error) {
          throw replayHint(config, family, error);
        }
      });
    }

    test('after the run: the process never exited, no temp file is left, blobs, blob rows and live files agree', async (t) => {
      t.diagnostic(`${session.stats.requests} requests; statuses ${JSON.stringify(Object.fromEntries([...session.stats.statuses].sort()))}`);
      assert.equal(target.exit(), null, 'the server process is still running');
      const violations = await session.finalCheck();
      assert.deepEqual(violations, []);
    });
  });

  describe('HTTP fuzz: the rate limits answer Atom too', () => {
    const LOGIN_ATTEMPTS = 3;
    const API_RATE = 30;
    let target: FuzzTarget;
    let session: FuzzSession;
    let apiRequests = 0;

    before(async () => {
      target = await factory({ apiRatePerIp: API_RATE, apiRatePerKey: 0, loginAttempts: LOGIN_ATTEMPTS });
      session = new FuzzSession(target);
    });
    after(async () => {
      await target?.stop();
    });

    /** A well-formed request to one of the catalogue's paths, any method, Accept and key. */
    const apiCaseArb = fc
      .record({
        method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PROPFIND', 'TRACE'),
        path: fc.constantFrom(...ENDPOINTS.flatMap((endpoint) => [endpoint.path, ...endpoint.aliases])),
        id: fc.stringMatching(/^[A-Z0-9]{10}$/),
        accept: fc.constantFrom(undefined, 'text/html', '*/*', 'application/json'),
        authorization: fc.option(fc.stringMatching(/^[A-Za-z0-9]{32}$/), { nil: undefined }),
        body: fc.option(fc.constantFrom('login=x&password=y', 'name=F', '_method=DELETE'), { nil: undefined }),
      })
      .map(({ method, path, id, accept, authorization, body }): FuzzCase => {
        const bytes = Buffer.from(body ?? '');
        const headers: [string, string][] = [['Host', HOST]];
        if (accept) headers.push(['Accept', accept]);
        if (authorization) headers.push(['Authorization', authorization]);
        if (body) headers.push(['Content-Type', 'application/x-www-form-urlencoded'], ['Content-Length', String(bytes.length)]);
        return printable({
          family: 'rate',
          method,
          target: path.replaceAll('<id>', id),
          version: 'HTTP/1.1',
          headers,
          body: bytes,
          wholeFileDigests: [],
          framing: 'complete',
          pauses: [],
          ending: 'wait',
          abortAfterMs: 0,
        });
      });

    test(`sign-in: past ${LOGIN_ATTEMPTS} failures a minute, POST /apikeys answers 429 errorWrongCredentials with Retry-After, in Atom`, async () => {
      const wrong = fc.record({ login: fc.constantFrom('admin', 'nobody', 'fz-x'), password: fc.string({ minLength: 1, maxLength: 20 }), alias: fc.boolean() });
      let attempts = 0;
      await fc.assert(
        fc.asyncProperty(wrong, async ({ login, password, alias }) => {
          const body = Buffer.from(new URLSearchParams({ login, [alias ? 'pass' : 'password']: password }).toString());
          const c = printable({
            family: 'sign-in',
            method: 'POST',
            target: '/apikeys',
            version: 'HTTP/1.1',
            headers: [
              ['Host', HOST],
              ['Content-Type', 'application/x-www-form-urlencoded'],
              ['Content-Length', String(body.length)],
            ],
            body,
            wholeFileDigests: [],
            framing: 'complete',
            pauses: [],
            ending: 'wait',
            abortAfterMs: 0,
          });
          const result = await session.run(c);
          apiRequests++;
          attempts++;
          if (result.violations.length > 0) throw new Error(reportCase(c, result.violations, result.exchange));
          const response = result.exchange.response!;
          const error = atomError(response.body.toString());
          // Failures count per address too, so every attempt after the first few is throttled.
          if (attempts > LOGIN_ATTEMPTS) {
            assert.equal(response.status, 429, reportCase(c, [], result.exchange));
            assert.equal(error?.code, 'errorWrongCredentials');
            assert.match(response.headers['retry-after'] ?? '', /^[1-9]\d*$/);
          } else {
            assert.equal(response.status, 401, reportCase(c, [], result.exchange));
            assert.equal(error?.code, 'errorWrongCredentials');
          }
        }),
        { seed: config.seed, numRuns: 8, includeErrorInReport: true },
      );
    });

    test(`API rate: past ${API_RATE} requests a minute from one address, every API request answers 429 errorRateLimited with Retry-After, in Atom`, async () => {
      await fc.assert(
        fc.asyncProperty(apiCaseArb, async (c) => {
          const result = await session.run(c);
          if (classifyTarget(c.target) === 'api') apiRequests++;
          if (result.violations.length > 0) throw new Error(reportCase(c, result.violations, result.exchange));
          if (apiRequests <= API_RATE) return;
          const response = result.exchange.response!;
          assert.equal(response.status, 429, reportCase(c, [], result.exchange));
          assert.equal(response.headers['content-type'], ATOM_TYPE);
          if (c.method !== 'HEAD') assert.equal(atomError(response.body.toString())?.code, 'errorRateLimited');
          assert.match(response.headers['retry-after'] ?? '', /^[1-9]\d*$/);
        }),
        { seed: config.seed, numRuns: 2 * API_RATE, includeErrorInReport: true },
      );
      assert.equal(target.exit(), null, 'the server process is still running');
    });
  });
}
