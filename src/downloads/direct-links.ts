import type { MetadataStore } from '../db/repositories/repositories.js';
import { errors } from '../domain/errors.js';
import { type Clock, ID_PATTERN } from '../domain/ids.js';
import { type Account, type FileRecord, FileStatus, premiumState } from '../domain/types.js';
import type { ServerSecrets } from '../security/secrets.js';
import type { AccountsService } from '../services/accounts-service.js';
import type { FilesService } from '../services/files-service.js';

export interface DirectLinksDeps {
  /** Where a link's account is read when the signed URL alone downloads. */
  store: MetadataStore;
  /** Signs and checks the tokens. */
  secrets: ServerSecrets;
  /** Premium state and API keys. */
  accounts: AccountsService;
  /** The file a link names, as its owner's clients see it. */
  files: FilesService;
  /** Expiry is written and judged by it. */
  clock: Clock;
  /** Lifetime of a direct link. */
  directLinkTtlMs: number;
  /** Whether the download request must carry the owner's API key (API.md 6). */
  directLinkRequiresKey: boolean;
}

/** A direct link's parts: the URL is built by the HTTP layer. */
export interface DirectLink {
  file: FileRecord;
  token: string;
  expiresAt: number;
}

const TOKEN_PATTERN = /^(\d{1,13})\.(\d{1,15})\.([A-Za-z0-9_-]{32})$/;

/**
 * Premium direct links (API.md section 6): issued to an account, then checked on each
 * download, which names who asks (the account to charge) for the downloads use case
 * (downloads-service.ts). What the download costs is decided there, not here.
 */
export class DirectLinks {
  constructor(private readonly deps: DirectLinksDeps) {}

  /** Issues a signed, expiring direct link to a premium account for any active file. */
  async directLink(caller: Account, fileId: string): Promise<DirectLink> {
    if (!this.deps.accounts.isPremium(caller)) throw errors.notPremium();
    const file = await this.deps.files.visible(fileId);
    if (file.status !== FileStatus.Active) throw errors.fileNotDownloadable();
    const expiresAt = Math.floor((this.deps.clock() + this.deps.directLinkTtlMs) / 1000);
    const token = `${expiresAt}.${caller.id}.${this.deps.secrets.sign(this.message(file.id, caller.id, expiresAt))}`;
    return { file, token, expiresAt };
  }

  /**
   * Checks a direct download: a valid unexpired token for this file, the API key of the
   * token's account (unless the operator allows the signed URL alone), active premium
   * and an active file. Returns the file and the account to charge.
   */
  async authorizeDirect(fileId: string, token: string, apiKey: string | undefined): Promise<{ file: FileRecord; account: Account }> {
    const { accountId } = this.checkDirectToken(fileId, token);
    let account: Account | null;
    if (this.deps.directLinkRequiresKey) {
      account = apiKey ? await this.deps.accounts.accountForApiKey(apiKey) : null;
      if (!account) throw errors.wrongApiKey();
      if (account.id !== accountId) throw errors.permissionDenied('The direct link belongs to another account');
    } else {
      account = await this.deps.store.accounts.byId(accountId);
      if (!account || account.disabled) throw errors.permissionDenied('The account of this link is disabled');
    }
    return this.directDownload(fileId, account);
  }

  /**
   * As authorizeDirect for the owner's signed-in browser: `signedIn` is the account of a
   * live site session (read on this request, never disabled) instead of an API key. The
   * HTTP layer decides when a session may stand in for the key (docs/api.md "Direct
   * links in a browser").
   */
  async authorizeDirectForSession(fileId: string, token: string, signedIn: Account): Promise<{ file: FileRecord; account: Account }> {
    const { accountId } = this.checkDirectToken(fileId, token);
    if (signedIn.id !== accountId) throw errors.permissionDenied('The direct link belongs to another account');
    return this.directDownload(fileId, signedIn);
  }

  /**
   * The token alone: signed for this file and not expired (404 for a forged or moved
   * token, 403 once expired). Returns the account it was issued to.
   */
  checkDirectToken(fileId: string, token: string): { accountId: number } {
    const parsed = this.parseToken(token);
    if (!ID_PATTERN.test(fileId) || !parsed) throw errors.fileNotFound();
    const { expiresAt, accountId, signature } = parsed;
    if (!this.deps.secrets.verify(this.message(fileId, accountId, expiresAt), signature)) throw errors.fileNotFound();
    if (expiresAt * 1000 <= this.deps.clock()) throw errors.permissionDenied('The direct link has expired');
    return { accountId };
  }

  /** The last checks of every direct download: active premium, active file. */
  private async directDownload(fileId: string, account: Account): Promise<{ file: FileRecord; account: Account }> {
    if (premiumState(account, this.deps.clock()) !== 'Active') throw errors.notPremium();
    const file = await this.deps.files.visible(fileId);
    if (file.status !== FileStatus.Active) throw errors.fileNotDownloadable();
    return { file, account };
  }

  /**
   * A token's parts, or null unless it is spelled exactly as directLink() writes it: the
   * numbers are compared back in their canonical form, so `0<expiry>` or `<expiry>.0<account>`
   * (which Number() reads as the same link) is refused like a forged token (issue 14).
   */
  private parseToken(token: string): { expiresAt: number; accountId: number; signature: string } | null {
    const match = TOKEN_PATTERN.exec(token);
    if (!match) return null;
    const expiresAt = Number(match[1]);
    const accountId = Number(match[2]);
    const signature = match[3]!;
    return `${String(expiresAt)}.${String(accountId)}.${signature}` === token ? { expiresAt, accountId, signature } : null;
  }

  private message(fileId: string, accountId: number, expiresAt: number): string {
    return `direct:${fileId}:${accountId}:${expiresAt}`;
  }
}
