import { type Kysely, sql } from 'kysely';
import { compiledQuery } from '../compiled-query.js';
import type { Database } from '../database.js';
import type { AccountsRepository, NewAccount } from './repositories.js';
import { toAccount, translateDuplicate } from './rows.js';

export function accountsRepository(db: Kysely<Database>): AccountsRepository {
  const select = () => db.selectFrom('accounts').selectAll();
  // Every API request looks its account up by key: that SQL is built and compiled once,
  // not per request (issues 9 and 28; building and compiling cost more than the lookup).
  const byApiKeyHash = compiledQuery(db, [''], (db, hash: string) => db.selectFrom('accounts').selectAll().where('api_key_hash', '=', hash));
  return {
    async create(account: NewAccount) {
      const row = await translateDuplicate(
        db
          .insertInto('accounts')
          .values({
            login: account.login,
            password_hash: account.passwordHash,
            name: account.name,
            email: account.email,
            balance_cents: 0,
            premium_start: account.premiumStart,
            premium_end: account.premiumEnd,
            traffic_left: account.trafficLeft,
            api_key_hash: null,
            api_key_sealed: null,
            is_operator: account.isOperator ? 1 : 0,
            disabled: 0,
            created_at: account.createdAt,
          })
          .returningAll()
          .executeTakeFirstOrThrow(),
        `login "${account.login}" is taken`,
      );
      return toAccount(row);
    },
    async byId(id) {
      const row = await select().where('id', '=', id).executeTakeFirst();
      return row ? toAccount(row) : null;
    },
    async byLogin(login) {
      const row = await select().where('login', '=', login).executeTakeFirst();
      return row ? toAccount(row) : null;
    },
    async credentials(login) {
      const row = await select().where('login', '=', login).executeTakeFirst();
      return row ? { account: toAccount(row), passwordHash: row.password_hash } : null;
    },
    async byApiKeyHash(hash) {
      const [row] = await byApiKeyHash(hash);
      return row ? toAccount(row) : null;
    },
    async sealedApiKey(id) {
      const row = await db.selectFrom('accounts').select('api_key_sealed').where('id', '=', id).executeTakeFirst();
      return row?.api_key_sealed ?? null;
    },
    async setApiKey(id, hash, sealed) {
      await db.updateTable('accounts').set({ api_key_hash: hash, api_key_sealed: sealed }).where('id', '=', id).execute();
    },
    async setApiKeyIfAbsent(id, hash, sealed) {
      const result = await db
        .updateTable('accounts')
        .set({ api_key_hash: hash, api_key_sealed: sealed })
        .where('id', '=', id)
        .where('api_key_hash', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async setPremium(id, start, end, trafficLeft) {
      await db.updateTable('accounts').set({ premium_start: start, premium_end: end, traffic_left: trafficLeft }).where('id', '=', id).execute();
    },
    async setPremiumPeriod(id, start, end) {
      await db.updateTable('accounts').set({ premium_start: start, premium_end: end }).where('id', '=', id).execute();
    },
    async addTraffic(id, bytes) {
      if (bytes === 0) return;
      await db
        .updateTable('accounts')
        .set({ traffic_left: sql`traffic_left + ${bytes}` })
        .where('id', '=', id)
        .execute();
    },
    async reserveTraffic(id, bytes) {
      // One conditional UPDATE: the check and the subtraction cannot be separated by
      // another download, on SQLite or PostgreSQL.
      const result = await db
        .updateTable('accounts')
        .set({ traffic_left: sql`traffic_left - ${bytes}` })
        .where('id', '=', id)
        .where('traffic_left', '>=', bytes)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async refundTraffic(id, bytes) {
      if (bytes <= 0) return;
      await db
        .updateTable('accounts')
        .set({ traffic_left: sql`traffic_left + ${bytes}` })
        .where('id', '=', id)
        .execute();
    },
    async chargeTraffic(id, bytes) {
      if (bytes <= 0) return;
      await db
        .updateTable('accounts')
        .set({ traffic_left: sql`case when traffic_left >= ${bytes} then traffic_left - ${bytes} else 0 end` })
        .where('id', '=', id)
        .execute();
    },
    async list() {
      return (await select().orderBy('id').execute()).map(toAccount);
    },
    async count() {
      const row = await db
        .selectFrom('accounts')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async setDisabled(id, disabled) {
      await db
        .updateTable('accounts')
        .set({ disabled: disabled ? 1 : 0 })
        .where('id', '=', id)
        .execute();
    },
    async setPasswordHash(id, passwordHash) {
      await db.updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', id).execute();
    },
    async setBalance(id, cents) {
      await db.updateTable('accounts').set({ balance_cents: cents }).where('id', '=', id).execute();
    },
    async addBalance(id, cents) {
      const row = await db
        .updateTable('accounts')
        .set({ balance_cents: sql`balance_cents + ${cents}` })
        .where('id', '=', id)
        .returning('balance_cents')
        .executeTakeFirstOrThrow();
      return Number(row.balance_cents);
    },
    async signInMethods(id) {
      const row = await db
        .selectNoFrom((eb) => [
          eb
            .selectFrom('totp_factors')
            .select((c) => c.fn.countAll().as('n'))
            .where('account_id', '=', id)
            .where('confirmed_at', 'is not', null)
            .as('totp'),
          eb
            .selectFrom('passkeys')
            .select((c) => c.fn.countAll().as('n'))
            .where('account_id', '=', id)
            .as('passkeys'),
          eb
            .selectFrom('account_identities')
            .select((c) => c.fn.countAll().as('n'))
            .where('account_id', '=', id)
            .as('identities'),
        ])
        .executeTakeFirstOrThrow();
      return { totp: Number(row.totp) > 0, passkeys: Number(row.passkeys), identities: Number(row.identities) };
    },
  };
}
