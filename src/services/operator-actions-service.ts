import { randomBytes } from 'node:crypto';
import type { SessionService } from '../auth/session-service.js';
import { sqlDateTime } from '../domain/dates.js';
import { InputError } from '../domain/errors.js';
import { money } from '../domain/money.js';
import type { Account, FileRecord } from '../domain/types.js';
import type { AccountsService, CreateAccountInput } from './accounts-service.js';
import type { AuditService } from './audit-service.js';
import type { FilesService } from './files-service.js';
import type { ModerationService } from './moderation-service.js';

export interface OperatorActionsServiceDeps {
  accounts: AccountsService;
  files: FilesService;
  moderation: ModerationService;
  sessions: SessionService;
  audit: AuditService;
  /** A new random password for a reset; injectable so tests can be deterministic (STYLE.md 10). */
  newPassword?: () => string;
}

/** What an operator can do to a file. */
export type FileAction = 'block' | 'unblock' | 'delete';

/**
 * Every change an operator makes, each recorded in the audit log with who made it: the
 * one use case the CLI (`cli:<os user>`) and the web console (`web:<login>`) share, so
 * the two can never audit the same action differently. Audit details never hold a
 * password or a key.
 */
export class OperatorActionsService {
  private readonly newPassword: () => string;

  constructor(private readonly deps: OperatorActionsServiceDeps) {
    // 96 random bits, 16 characters: typed once by the account's owner, then changed.
    this.newPassword = deps.newPassword ?? (() => randomBytes(12).toString('base64url'));
  }

  /** Creates an account (never an operator: those come from the first start). */
  async createAccount(actor: string, input: Omit<CreateAccountInput, 'isOperator'>): Promise<Account> {
    const account = await this.deps.accounts.create({ ...input, isOperator: false });
    const details = [`id=${account.id}`];
    if (input.premiumDays) details.push(`premium-days=${input.premiumDays}`);
    if (input.trafficBytes) details.push(`traffic=${input.trafficBytes}`);
    await this.record(actor, 'accounts.create', `account:${account.login}`, details.join(' '));
    return account;
  }

  /**
   * Extends premium by `days` (negative: shortens an active period) and adds
   * `trafficBytes` (AccountsService.extendPremium, which bounds both).
   */
  async extendPremium(actor: string, login: string, days: number, trafficBytes: number): Promise<Account> {
    if (days === 0 && trafficBytes === 0) throw new InputError('give premium days and/or traffic to add');
    const account = await this.deps.accounts.extendPremium(login, days, trafficBytes);
    await this.recordPremium(actor, account, `days=${days} traffic=${trafficBytes}`);
    return account;
  }

  /**
   * Ends an active premium period now, and adds `trafficBytes` if any; `ended` is false
   * (and nothing is recorded) when premium was not active and there is no traffic to add.
   */
  async endPremium(actor: string, login: string, trafficBytes = 0): Promise<{ account: Account; ended: boolean }> {
    const { account, ended } = await this.deps.accounts.endPremium(login, trafficBytes);
    if (!ended && trafficBytes === 0) return { account, ended };
    await this.recordPremium(actor, account, `end${ended ? '' : ' (was not active)'} traffic=${trafficBytes}`);
    return { account, ended };
  }

  private recordPremium(actor: string, account: Account, change: string): Promise<void> {
    const until = sqlDateTime(account.premiumEnd) || '-';
    return this.record(actor, 'accounts.premium', `account:${account.login}`, `${change}; premium until ${until}, traffic left ${account.trafficLeft}`);
  }

  /** Disables or enables an account; `changed` is false (and nothing is audited) when it already was. */
  async setDisabled(actor: string, login: string, disabled: boolean): Promise<{ account: Account; changed: boolean }> {
    if (disabled) refuseOwnAccount(actor, login, 'disable');
    const { before, after } = await this.deps.accounts.setDisabled(login, disabled);
    const changed = before.disabled !== disabled;
    if (changed) await this.record(actor, `accounts.${disabled ? 'disable' : 'enable'}`, `account:${before.login}`, `id=${before.id}`);
    return { account: after, changed };
  }

  /** Sets a password the operator chose; the account's sessions end. */
  async setPassword(actor: string, login: string, password: string): Promise<Account> {
    const account = await this.deps.accounts.setPassword(login, password);
    await this.record(actor, 'accounts.set-password', `account:${account.login}`, `id=${account.id}`);
    return account;
  }

  /** Sets a new random password, returned to be shown once; the account's sessions end. */
  async resetPassword(actor: string, login: string): Promise<{ account: Account; password: string }> {
    refuseOwnAccount(actor, login, 'reset the password of');
    const password = this.newPassword();
    const account = await this.deps.accounts.setPassword(login, password);
    await this.record(actor, 'accounts.reset-password', `account:${account.login}`, `id=${account.id}`);
    return { account, password };
  }

  /** Ends every web session of the account ("sign out everywhere"); its API key stays. */
  async signOutEverywhere(actor: string, login: string): Promise<{ account: Account; ended: number }> {
    const account = await this.deps.accounts.byLoginOrFail(login);
    const ended = await this.deps.sessions.endAll(account.id);
    await this.record(actor, 'accounts.sign-out-everywhere', `account:${account.login}`, `id=${account.id} sessions=${ended}`);
    return { account, ended };
  }

  /** Replaces the account's API key; returns the new one (the old stops working). */
  async regenerateKey(actor: string, login: string): Promise<{ account: Account; key: string }> {
    const account = await this.deps.accounts.byLoginOrFail(login);
    const key = await this.deps.accounts.regenerateApiKey(account.id);
    await this.record(actor, 'accounts.regenerate-key', `account:${account.login}`, `id=${account.id}`);
    return { account, key };
  }

  /** Sets the balance (`set`) or adds to it (`add`, may be negative) in cents. */
  async changeBalance(actor: string, login: string, change: { set: number } | { add: number }): Promise<{ before: Account; after: Account }> {
    const result = 'set' in change ? await this.deps.accounts.setBalance(login, change.set) : await this.deps.accounts.addBalance(login, change.add);
    const what = 'set' in change ? `set ${money(change.set)}` : `add ${money(change.add)}`;
    await this.record(
      actor,
      'accounts.balance',
      `account:${result.before.login}`,
      `${what}: ${money(result.before.balanceCents)} -> ${money(result.after.balanceCents)}`,
    );
    return result;
  }

  /** Blocks, unblocks or deletes a file; returns it as it is now. */
  async changeFile(actor: string, action: FileAction, id: string): Promise<FileRecord> {
    const files = this.deps.files;
    const file = await { block: () => files.block(id), unblock: () => files.unblock(id), delete: () => files.operatorDelete(id) }[action]();
    await this.record(actor, `files.${action}`, `file:${file.id}`, `"${file.name}" owner=${file.ownerId} sha256=${file.sha256}`);
    return file;
  }

  /** Lists a digest; with `blockExisting`, blocks its active files too. Returns the digest and how many were blocked. */
  async blacklistDigest(actor: string, sha256: string, reason: string, blockExisting: boolean): Promise<{ digest: string; blocked: number }> {
    reason = cleanReason(reason);
    const blocked = await this.deps.files.blacklistAdd(sha256, reason, blockExisting);
    const digest = sha256.trim().toLowerCase();
    const details = [reason ? `reason: ${reason}` : '', blockExisting ? `blocked ${blocked} existing file(s)` : ''].filter(Boolean).join('; ');
    await this.record(actor, 'blacklist.add', `sha256:${digest}`, details);
    return { digest, blocked };
  }

  /** Unlists a digest; InputError when it was not listed. */
  async unblacklistDigest(actor: string, sha256: string): Promise<string> {
    await this.deps.files.blacklistRemove(sha256);
    const digest = sha256.trim().toLowerCase();
    await this.record(actor, 'blacklist.remove', `sha256:${digest}`);
    return digest;
  }

  /** Lists a file-name pattern; returns its stored form. */
  async blacklistName(actor: string, pattern: string, reason: string): Promise<string> {
    reason = cleanReason(reason);
    const stored = await this.deps.moderation.addNamePattern(pattern, reason);
    await this.record(actor, 'blacklist.add-name', `name:${stored}`, reason ? `reason: ${reason}` : '');
    return stored;
  }

  /** Unlists a file-name pattern; InputError when it was not listed. */
  async unblacklistName(actor: string, pattern: string): Promise<string> {
    const stored = await this.deps.moderation.removeNamePattern(pattern);
    await this.record(actor, 'blacklist.remove-name', `name:${stored}`);
    return stored;
  }

  /** Recorded after the change succeeded: a refused change leaves no entry. */
  private record(actor: string, action: string, object: string, details = ''): Promise<void> {
    return this.deps.audit.record({ actor, action, object, details });
  }
}

/** A blacklist reason on one line, at most the 255 characters its column holds. */
function cleanReason(reason: string): string {
  const clean = reason.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  if (clean.length > 255) throw new InputError('the reason must be at most 255 characters');
  return clean;
}

/**
 * An operator in the console (`web:<login>`) cannot lock themselves out: disabling their
 * own account or resetting its password (which ends their session) would leave them, and
 * perhaps the site, without an operator. Their own password is changed on the profile.
 */
function refuseOwnAccount(actor: string, login: string, what: string): void {
  if (actor === `web:${login}`) throw new InputError(`you cannot ${what} the account you are signed in with`);
}
