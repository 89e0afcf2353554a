import type { Kysely, Selectable } from 'kysely';
import type { Database, PasskeysTable } from '../database.js';
import type { PasskeyRecord, PasskeysRepository } from './repositories.js';
import { translateDuplicate } from './rows.js';

// PostgreSQL returns bigint columns as strings; Number() keeps the mapping engine-neutral.
const toPasskey = (row: Selectable<PasskeysTable>): PasskeyRecord => ({
  id: row.id,
  accountId: Number(row.account_id),
  name: row.name,
  publicKey: row.public_key,
  counter: Number(row.counter),
  transports: row.transports === '' ? [] : row.transports.split(','),
  backedUp: Number(row.backed_up) === 1,
  createdAt: Number(row.created_at),
  lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
});

export function passkeysRepository(db: Kysely<Database>): PasskeysRepository {
  return {
    async create(passkey) {
      await translateDuplicate(
        db
          .insertInto('passkeys')
          .values({
            id: passkey.id,
            account_id: passkey.accountId,
            name: passkey.name,
            public_key: passkey.publicKey,
            counter: passkey.counter,
            transports: passkey.transports.join(','),
            backed_up: passkey.backedUp ? 1 : 0,
            created_at: passkey.createdAt,
            last_used_at: null,
          })
          .execute(),
        'this passkey is registered already',
      );
    },
    async byId(id) {
      const row = await db.selectFrom('passkeys').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toPasskey(row) : null;
    },
    async listForAccount(accountId) {
      const rows = await db.selectFrom('passkeys').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toPasskey);
    },
    async rename(id, accountId, name) {
      const result = await db.updateTable('passkeys').set({ name }).where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async remove(id, accountId) {
      const result = await db.deleteFrom('passkeys').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async recordUse(id, counter, backedUp, at) {
      // One statement: the check and the move are atomic on both engines, so an assertion
      // raced on two servers with the same counter is accepted once (WebAuthn §7.2 step 21).
      const result = await db
        .updateTable('passkeys')
        .set({ counter, backed_up: backedUp ? 1 : 0, last_used_at: at })
        .where('id', '=', id)
        // An authenticator that does not count reports 0 every time: 0 stays accepted.
        .where('counter', counter === 0 ? '=' : '<', counter)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}
