import type { MetadataStore, SignInMethods } from '../db/repositories/repositories.js';
import type { Clock } from '../domain/ids.js';
import type { Account } from '../domain/types.js';
import { constantTimeEqual, type ServerSecrets } from '../security/secrets.js';
import type { AccountsService } from '../services/accounts-service.js';
import type { AuditService } from '../services/audit-service.js';
import { canonicalRecoveryCode, newRecoveryCode, RECOVERY_CODE_COUNT } from './recovery-codes.js';
import { newTotpSecret, totpDigits, totpStep, totpUri } from './totp.js';

export interface SecondFactorServiceDeps {
  store: MetadataStore;
  secrets: ServerSecrets;
  accounts: AccountsService;
  audit: AuditService;
  clock: Clock;
  /** Who must have a second factor to sign in with a password (`--second-factor-required`). */
  required: 'none' | 'operators' | 'everyone';
  /** New secrets and recovery codes; injectable for tests (STYLE.md 10). */
  newSecret?: () => string;
  newRecoveryCode?: () => string;
}

/** Where an account's TOTP stands. */
export interface SecondFactorStatus {
  /** 'pending' while set up but not yet confirmed with a code (it does not count then). */
  totp: 'off' | 'pending' | 'on';
  /** Unused recovery codes (0 unless on). */
  recoveryCodesLeft: number;
}

/** What the set-up page shows: the secret as an authenticator app's URI and as text to type. */
export interface TotpSetup {
  secret: string;
  uri: string;
  /**
   * The secret sealed, for the page's flow to keep (the sign-in challenge, the confirm form):
   * only the flow that made a secret shows it or confirms it (`setupOf`, `confirm`).
   */
  sealed: string;
}

/** How a code was accepted. */
export type AcceptedCode = 'totp' | 'recovery';

/**
 * The second factor of password sign-in (issue 26): a TOTP secret (RFC 6238), confirmed
 * with one code before it counts, and ten one-time recovery codes. The secret is stored
 * sealed, the codes as keyed hashes; every code is spent by one conditional statement, so
 * a code works once whichever servers two requests reach.
 */
export class SecondFactorService {
  private readonly newSecret: () => string;
  private readonly newCode: () => string;

  constructor(private readonly deps: SecondFactorServiceDeps) {
    this.newSecret = deps.newSecret ?? newTotpSecret;
    this.newCode = deps.newRecoveryCode ?? newRecoveryCode;
  }

  /** Where the account's TOTP stands, and its recovery codes left. */
  async status(accountId: number): Promise<SecondFactorStatus> {
    const factor = await this.deps.store.secondFactors.totp(accountId);
    if (!factor) return { totp: 'off', recoveryCodesLeft: 0 };
    if (factor.confirmedAt === null) return { totp: 'pending', recoveryCodesLeft: 0 };
    return { totp: 'on', recoveryCodesLeft: await this.deps.store.secondFactors.recoveryCodesLeft(accountId) };
  }

  /** Whether the rule of `--second-factor-required` covers this account. */
  mustHaveOne(account: Account): boolean {
    return this.deps.required === 'everyone' || (this.deps.required === 'operators' && account.isOperator);
  }

  /**
   * Starts (or starts again) a set-up with a new secret; null when the account already
   * has a confirmed factor, which a new set-up never replaces (turn it off first).
   */
  async begin(account: Account, issuer: string): Promise<TotpSetup | null> {
    const secret = this.newSecret();
    const sealed = this.deps.secrets.sealFactorSecret(secret);
    const stored = await this.deps.store.secondFactors.beginTotp(account.id, sealed, this.deps.clock());
    return stored ? { secret, uri: totpUri(secret, issuer, account.login), sealed } : null;
  }

  /**
   * The set-up a flow began (`sealed` from its begin()) to show again, while it is still
   * the one in progress; null once another set-up replaced it, or it was confirmed. A
   * set-up someone else began (with the password alone, say) is never shown.
   */
  async setupOf(account: Account, issuer: string, sealed: string): Promise<TotpSetup | null> {
    const factor = await this.deps.store.secondFactors.totp(account.id);
    const secret = factor && factor.confirmedAt === null ? this.sameSecret(factor.sealedSecret, sealed) : null;
    return secret === null ? null : { secret, uri: totpUri(secret, issuer, account.login), sealed };
  }

  /**
   * Confirms the set-up a flow began (`sealed` from its begin()) with a code of its secret:
   * the factor counts from now on, and the new recovery codes are returned, to be shown this
   * once. null for a wrong code, no set-up in progress, or one another flow began since.
   */
  async confirm(account: Account, typed: string, sealed: string, actor: string): Promise<string[] | null> {
    const accountId = account.id;
    const factor = await this.deps.store.secondFactors.totp(accountId);
    const digits = totpDigits(typed);
    if (!factor || factor.confirmedAt !== null || digits === null) return null;
    const secret = this.sameSecret(factor.sealedSecret, sealed);
    const step = secret === null ? null : totpStep(secret, digits, this.deps.clock());
    if (step === null) return null;
    const codes = this.recoveryCodes();
    const now = this.deps.clock();
    const confirmed = await this.deps.store.transaction(async (repos) => {
      // Only the row compared above: a set-up begun meanwhile is not confirmed by this code.
      if (!(await repos.secondFactors.confirmTotp(accountId, step, now, factor.sealedSecret))) return false;
      await repos.secondFactors.replaceRecoveryCodes(accountId, this.hashes(accountId, codes), now);
      return true;
    });
    if (!confirmed) return null;
    await this.audited(actor, 'accounts.turn-on-second-factor', account);
    return codes;
  }

  /**
   * Checks a code typed at sign-in or before a change: a TOTP code of a confirmed factor
   * (each time step accepted once) or an unused recovery code (spent now). null for
   * anything else, a replayed code included.
   */
  async verify(accountId: number, typed: string): Promise<AcceptedCode | null> {
    const digits = totpDigits(typed);
    if (digits !== null) {
      const factor = await this.deps.store.secondFactors.totp(accountId);
      if (!factor || factor.confirmedAt === null) return null;
      const secret = this.deps.secrets.openFactorSecret(factor.sealedSecret);
      const step = secret === null ? null : totpStep(secret, digits, this.deps.clock());
      if (step === null) return null;
      return (await this.deps.store.secondFactors.useTotpStep(accountId, step)) ? 'totp' : null;
    }
    const code = canonicalRecoveryCode(typed);
    if (code === null) return null;
    const spent = await this.deps.store.secondFactors.useRecoveryCode(accountId, this.deps.secrets.recoveryCodeHash(accountId, code), this.deps.clock());
    return spent ? 'recovery' : null;
  }

  /** Turns the factor off after a valid code (audited); false (nothing changed) for a wrong one. */
  async turnOff(account: Account, typed: string, actor: string): Promise<boolean> {
    if ((await this.verify(account.id, typed)) === null) return false;
    await this.deps.store.transaction((repos) => repos.secondFactors.remove(account.id));
    await this.audited(actor, 'accounts.turn-off-second-factor', account);
    return true;
  }

  /** New recovery codes (the old ones stop working) after a valid code (audited); null for a wrong one. */
  async renewRecoveryCodes(account: Account, typed: string, actor: string): Promise<string[] | null> {
    if ((await this.verify(account.id, typed)) === null) return null;
    const codes = this.recoveryCodes();
    await this.deps.store.transaction((repos) => repos.secondFactors.replaceRecoveryCodes(account.id, this.hashes(account.id, codes), this.deps.clock()));
    await this.audited(actor, 'accounts.renew-recovery-codes', account);
    return codes;
  }

  /**
   * An operator removes the account's TOTP and recovery codes (its owner lost the phone
   * and the codes): audited; `removed` is false (and nothing is audited) when it had none.
   * Passkeys are left as they are: the owner removes them from the profile.
   */
  async operatorReset(actor: string, login: string): Promise<{ account: Account; removed: boolean }> {
    const account = await this.deps.accounts.byLoginOrFail(login);
    const removed = await this.deps.store.transaction((repos) => repos.secondFactors.remove(account.id));
    if (removed)
      await this.deps.audit.record({ actor, action: 'accounts.reset-second-factor', object: `account:${account.login}`, details: `id=${account.id}` });
    return { account, removed };
  }

  /** How each account of a console page signs in besides its password, in a fixed number of queries. */
  methodsOf(accountIds: number[]): Promise<Map<number, SignInMethods>> {
    return this.deps.store.operatorQueries.signInMethodsOf(accountIds);
  }

  /** The owner's own changes leave the same trail as an operator's (like a password change). */
  private audited(actor: string, action: string, account: Account): Promise<void> {
    return this.deps.audit.record({ actor, action, object: `account:${account.login}`, details: `id=${account.id} by the account itself` });
  }

  /** The secret of `stored` when `sealed` holds the same one (compared in constant time), else null. */
  private sameSecret(stored: string, sealed: string): string | null {
    const secret = this.deps.secrets.openFactorSecret(stored);
    const shown = this.deps.secrets.openFactorSecret(sealed);
    return secret !== null && shown !== null && constantTimeEqual(secret, shown) ? secret : null;
  }

  private recoveryCodes(): string[] {
    const codes = new Set<string>();
    while (codes.size < RECOVERY_CODE_COUNT) codes.add(this.newCode());
    return [...codes];
  }

  private hashes(accountId: number, codes: string[]): string[] {
    return codes.map((code) => this.deps.secrets.recoveryCodeHash(accountId, canonicalRecoveryCode(code)!));
  }
}
