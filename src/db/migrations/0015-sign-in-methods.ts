import type { Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * Sign-in beyond a password (issue 26):
 * - account_identities: OpenID Connect identities (issuer + subject) linked to accounts. A
 *   pair links at most one account; an e-mail never links anything by itself.
 * - totp_factors: an account's TOTP secret (sealed with the server secret), counted once
 *   confirmed; `last_step` is the newest time step accepted, so no code works twice.
 * - recovery_codes: one-time codes, stored as keyed hashes (over the account id and the
 *   code); `used_at` once spent.
 * - passkeys: WebAuthn credentials, several per account, named.
 * - sign_in_challenges: short-lived single-use state of a sign-in in progress (an OIDC
 *   flow's state, nonce and PKCE verifier; a WebAuthn challenge; a password accepted and
 *   waiting for its second factor), in the database so any server behind the load balancer
 *   can finish what another began. `id` is the SHA-256 of the random value the browser
 *   holds, never the value itself.
 * Additive: servers of the previous version ignore these tables.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const serial = isPostgres(db) ? 'bigserial' : 'integer';
  await db.schema
    .createTable('account_identities')
    .addColumn('id', serial, (c) => (isPostgres(db) ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addUniqueConstraint('account_identities_issuer_subject', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('account_identities_account').on('account_identities').column('account_id').execute();
  await db.schema
    .createTable('totp_factors')
    .addColumn('account_id', 'bigint', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('sealed_secret', 'text', (c) => c.notNull())
    // Null while being set up: the factor counts only once a code confirmed it.
    .addColumn('confirmed_at', 'bigint')
    .addColumn('last_step', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('recovery_codes')
    // A keyed hash over the account id and the code, so equal codes of two accounts differ.
    .addColumn('code_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('recovery_codes_account').on('recovery_codes').column('account_id').execute();
  await db.schema
    .createTable('passkeys')
    // The credential id, base64url (WebAuthn allows up to 1023 bytes).
    .addColumn('id', 'varchar(1400)', (c) => c.primaryKey())
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    // The COSE public key, base64url.
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(0))
    // Comma-separated AuthenticatorTransport values ('' when unknown).
    .addColumn('transports', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('backed_up', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('passkeys_account').on('passkeys').column('account_id').execute();
  await db.schema
    .createTable('sign_in_challenges')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('kind', 'varchar(32)', (c) => c.notNull())
    .addColumn('account_id', 'bigint')
    // What the step needs later, as JSON (a PKCE verifier, a nonce, a return path, ...).
    .addColumn('payload', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_challenges_expires').on('sign_in_challenges').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['sign_in_challenges', 'passkeys', 'recovery_codes', 'totp_factors', 'account_identities']) {
    await db.schema.dropTable(table).execute();
  }
}
