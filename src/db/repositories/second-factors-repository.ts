import type { Kysely, Selectable } from 'kysely';
import type { Database, TotpFactorsTable } from '../database.js';
import type { SecondFactorsRepository, TotpFactor } from './repositories.js';

const toFactor = (row: Selectable<TotpFactorsTable>): TotpFactor => ({
  accountId: Number(row.account_id),
  sealedSecret: row.sealed_secret,
  confirmedAt: row.confirmed_at === null ? null : Number(row.confirmed_at),
  lastStep: Number(row.last_step),
  createdAt: Number(row.created_at),
});

export function secondFactorsRepository(db: Kysely<Database>): SecondFactorsRepository {
  return {
    async totp(accountId) {
      const row = await db.selectFrom('totp_factors').selectAll().where('account_id', '=', accountId).executeTakeFirst();
      return row ? toFactor(row) : null;
    },
    async beginTotp(accountId, sealedSecret, now) {
      // One upsert: a new set-up replaces one still unconfirmed and never a confirmed one,
      // whatever another request on another server does at the same moment.
      const result = await db
        .insertInto('totp_factors')
        .values({ account_id: accountId, sealed_secret: sealedSecret, confirmed_at: null, last_step: 0, created_at: now })
        .onConflict((oc) =>
          oc.column('account_id').doUpdateSet({ sealed_secret: sealedSecret, last_step: 0, created_at: now }).where('totp_factors.confirmed_at', 'is', null),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    async confirmTotp(accountId, step, now, sealedSecret) {
      let update = db
        .updateTable('totp_factors')
        .set({ confirmed_at: now, last_step: step })
        .where('account_id', '=', accountId)
        .where('confirmed_at', 'is', null)
        .where('last_step', '<', step);
      if (sealedSecret !== undefined) update = update.where('sealed_secret', '=', sealedSecret);
      const result = await update.executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async useTotpStep(accountId, step) {
      // The replay rule in one statement: of concurrent requests with the same code, on any
      // number of servers, one moves last_step forward and the others match no row.
      const result = await db
        .updateTable('totp_factors')
        .set({ last_step: step })
        .where('account_id', '=', accountId)
        .where('confirmed_at', 'is not', null)
        .where('last_step', '<', step)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async useRecoveryCode(accountId, codeHash, now) {
      const result = await db
        .updateTable('recovery_codes')
        .set({ used_at: now })
        .where('code_hash', '=', codeHash)
        .where('account_id', '=', accountId)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async replaceRecoveryCodes(accountId, codeHashes, now) {
      await db.deleteFrom('recovery_codes').where('account_id', '=', accountId).execute();
      if (codeHashes.length === 0) return;
      await db
        .insertInto('recovery_codes')
        .values(codeHashes.map((code_hash) => ({ code_hash, account_id: accountId, used_at: null, created_at: now })))
        .execute();
    },
    async recoveryCodesLeft(accountId) {
      const row = await db
        .selectFrom('recovery_codes')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', accountId)
        .where('used_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async remove(accountId) {
      await db.deleteFrom('recovery_codes').where('account_id', '=', accountId).execute();
      const result = await db.deleteFrom('totp_factors').where('account_id', '=', accountId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
