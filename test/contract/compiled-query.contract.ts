import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { compiledQuery, preparedStatementName } from '../../src/db/compiled-query.js';
import type { Database } from '../../src/db/database.js';
import type { Engine } from '../../src/db/dialect.js';
import type { MetadataStore } from '../../src/db/repositories/repositories.js';

/** A migrated, empty database, its store, and how to remove it. */
export interface CompiledQueryHarness {
  db: Kysely<Database>;
  store: MetadataStore;
  cleanup(): Promise<void>;
}

const T0 = Date.parse('2026-11-21T10:04:05Z');

/**
 * compiled-query.ts on every engine: a query compiled once answers what the builder
 * answers for every parameter, and on PostgreSQL runs as a named prepared statement that
 * survives another server's migration changing the table under it.
 */
export function compiledQueryContract(name: string, engine: Engine, makeHarness: () => Promise<CompiledQueryHarness>): void {
  describe(`compiled queries: ${name}`, () => {
    let harness: CompiledQueryHarness;
    let db: Kysely<Database>;
    beforeEach(async () => {
      harness = await makeHarness();
      db = harness.db;
      for (const login of ['ann', 'bob', 'cy']) {
        const account = await harness.store.accounts.create({
          login,
          passwordHash: 'x',
          name: login.toUpperCase(),
          email: `${login}@example.org`,
          premiumStart: login === 'bob' ? T0 : null,
          premiumEnd: login === 'bob' ? T0 + 1000 : null,
          trafficLeft: login.length * 7,
          isOperator: false,
          createdAt: T0,
        });
        await harness.store.accounts.setApiKey(account.id, login.repeat(64 / login.length + 1).slice(0, 64), 'sealed');
      }
    });
    afterEach(() => harness.cleanup());

    test('answers the rows the builder answers, for every parameter', async () => {
      const byLogin = compiledQuery(db, [''], (db, login: string) => db.selectFrom('accounts').selectAll().where('login', '=', login));
      // Two parameters of two types, in order: a mix-up would answer other rows.
      const byTraffic = compiledQuery(db, [0, ''], (db, least: number, notLogin: string) =>
        db.selectFrom('accounts').select(['login', 'traffic_left']).where('traffic_left', '>=', least).where('login', '<>', notLogin).orderBy('login'),
      );
      for (const login of ['ann', 'bob', 'cy', 'nobody', "ann' or '1'='1"]) {
        assert.deepEqual(await byLogin(login), await db.selectFrom('accounts').selectAll().where('login', '=', login).execute(), login);
      }
      for (const [least, notLogin] of [
        [0, 'ann'],
        [21, 'bob'],
        [22, 'cy'],
        [100, ''],
      ] as const) {
        const expected = await db
          .selectFrom('accounts')
          .select(['login', 'traffic_left'])
          .where('traffic_left', '>=', least)
          .where('login', '<>', notLogin)
          .orderBy('login')
          .execute();
        assert.deepEqual(await byTraffic(least, notLogin), expected, `${least} ${notLogin}`);
      }
      assert.deepEqual(
        (await byTraffic(21, 'bob')).map((row) => row.login),
        ['ann', 'cy'].filter((login) => login.length * 7 >= 21),
      );
    });

    test('the repositories read through it as before: account by API key, file by id', async () => {
      const bob = (await harness.store.accounts.byLogin('bob'))!;
      assert.deepEqual(await harness.store.accounts.byApiKeyHash('bob'.repeat(22).slice(0, 64)), bob);
      assert.equal(await harness.store.accounts.byApiKeyHash('f'.repeat(64)), null);
      assert.equal(await harness.store.files.byId('nosuchfile'), null);
    });

    test('refuses a query whose parameters are not its placeholders in order', async () => {
      const extra = compiledQuery(db, [''], (db, login: string) => db.selectFrom('accounts').selectAll().where('login', '=', login).where('disabled', '=', 0));
      await assert.rejects(extra('ann'), /not its placeholders/);
      const swapped = compiledQuery(db, [1, 2], (db, a: number, b: number) =>
        db.selectFrom('accounts').selectAll().where('id', '=', b).where('traffic_left', '=', a),
      );
      await assert.rejects(swapped(1, 2), /not its placeholders/);
    });

    if (engine === 'postgres') {
      test('PostgreSQL: a named prepared statement, prepared anew when a migration adds a column', async () => {
        const byLogin = compiledQuery(db, [''], (db, login: string) => db.selectFrom('accounts').selectAll().where('login', '=', login));
        assert.equal((await byLogin('ann'))[0]?.name, 'ANN');
        const text = db.selectFrom('accounts').selectAll().where('login', '=', '').compile().sql;
        const statement = preparedStatementName(text);
        assert.match(statement ?? '', /^fh_[0-9a-f]{16}$/);
        // Every connection of the pool that ran it holds it prepared under that name.
        const held = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(db);
        assert.ok(
          held.rows.some((row) => row.name === statement),
          'prepared on the connection',
        );
        await sql`alter table accounts add column added_by_test integer not null default 5`.execute(db);
        // `select *` now has one more column: the old statement cannot run again.
        for (let i = 0; i < 3; i++) assert.equal((await byLogin('bob'))[0]?.name, 'BOB');
        assert.equal(((await byLogin('cy'))[0] as unknown as { added_by_test: number }).added_by_test, 5);
      });
    }
  });
}
