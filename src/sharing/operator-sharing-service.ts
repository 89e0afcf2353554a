import type { MetadataStore, ShareRecord, UploadRequestRecord } from '../db/repositories/repositories.js';
import { errors, InputError } from '../domain/errors.js';
import { type Clock, LINK_ID_PATTERN } from '../domain/ids.js';
import type { AuditService } from '../services/audit-service.js';

export interface OperatorSharingDeps {
  store: MetadataStore;
  clock: Clock;
  audit: Pick<AuditService, 'record'>;
}

/** Where a share or request stands now. */
export type LinkState = 'live' | 'expired' | 'revoked' | 'closed';

/** A share as the console lists it. */
export interface OperatorShareView {
  share: ShareRecord;
  /** The owner's login; '' when the account is gone. */
  ownerLogin: string;
  /** The shared file's or folder's name; '' when it is gone. */
  target: string;
  state: LinkState;
}

/** An upload request as the console lists it. */
export interface OperatorRequestView {
  request: UploadRequestRecord;
  ownerLogin: string;
  /** The folder's name; null for the owner's top level, '' when the folder is gone. */
  folder: string | null;
  state: LinkState;
}

/** A page of a console list and where the next one starts. */
export interface LinkPage<T> {
  items: T[];
  next: { createdAt: number; id: string } | null;
}

/** What the console's search asks. */
export interface LinkSearchInput {
  /** An owner's login; every account's when empty. */
  owner?: string;
  /** Only live (not revoked or closed) ones. */
  liveOnly?: boolean;
  before?: { createdAt: number; id: string };
  limit: number;
}

/**
 * The operator's side of shares and upload requests (issue 25: "the console lists shares
 * and requests (with their counts) and can revoke them"): every account's, searched by
 * owner, and revoked or closed by an operator, each in the audit log under the operator's
 * name (`web:<login>` from the console). The owners' side is SharesService and
 * UploadRequestsService; a revoked share and a closed request are the same rows there.
 */
export class OperatorSharingService {
  constructor(private readonly deps: OperatorSharingDeps) {}

  /** A page of shares, newest first, with owner and target names and their state now. */
  async shares(query: LinkSearchInput): Promise<LinkPage<OperatorShareView>> {
    const ownerId = await this.ownerIdOf(query.owner);
    const rows = await this.deps.store.operatorQueries.searchShares({ ownerId, liveOnly: query.liveOnly, before: query.before, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const logins = await this.loginsOf(page.map((share) => share.ownerId));
    const now = this.deps.clock();
    const items = await Promise.all(
      page.map(
        async (share): Promise<OperatorShareView> => ({
          share,
          ownerLogin: logins.get(share.ownerId) ?? '',
          target: await this.targetName(share),
          state: share.revokedAt !== null ? 'revoked' : share.expiresAt !== null && now >= share.expiresAt ? 'expired' : 'live',
        }),
      ),
    );
    return { items, next: nextOf(rows, page, query.limit) };
  }

  /** A page of upload requests, newest first, with owner and folder names and their state now. */
  async requests(query: LinkSearchInput): Promise<LinkPage<OperatorRequestView>> {
    const ownerId = await this.ownerIdOf(query.owner);
    const rows = await this.deps.store.operatorQueries.searchRequests({ ownerId, liveOnly: query.liveOnly, before: query.before, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const logins = await this.loginsOf(page.map((request) => request.ownerId));
    const now = this.deps.clock();
    const items = await Promise.all(
      page.map(
        async (request): Promise<OperatorRequestView> => ({
          request,
          ownerLogin: logins.get(request.ownerId) ?? '',
          folder: request.folderId === null ? null : ((await this.deps.store.folders.byId(request.folderId))?.name ?? ''),
          state: request.closed ? 'closed' : request.expiresAt !== null && now >= request.expiresAt ? 'expired' : 'live',
        }),
      ),
    );
    return { items, next: nextOf(rows, page, query.limit) };
  }

  /** Revokes any account's share: its link answers errorShareNotFound from now on. errorShareNotFound when unknown or revoked already. */
  async revokeShare(actor: string, id: string): Promise<ShareRecord> {
    const share = LINK_ID_PATTERN.test(id) ? await this.deps.store.shares.byId(id) : null;
    if (!share || share.revokedAt !== null) throw errors.shareNotFound();
    const now = this.deps.clock();
    if (!(await this.deps.store.shares.revoke(id, share.ownerId, now))) throw errors.shareNotFound();
    await this.deps.audit.record({
      actor,
      action: 'shares.revoke',
      object: `share:${id}`,
      details: `by an operator; owner #${share.ownerId} downloads=${share.downloads}`,
    });
    return { ...share, revokedAt: now };
  }

  /** Closes any account's upload request (under the request's lock, as its owner's close): the files stay. */
  async closeRequest(actor: string, id: string): Promise<UploadRequestRecord> {
    const request = LINK_ID_PATTERN.test(id) ? await this.deps.store.uploadRequests.byId(id) : null;
    if (!request || request.closed) throw errors.requestNotFound();
    const closed = await this.deps.store.transaction(async (repos) => {
      await repos.locks.request(id);
      return repos.uploadRequests.close(id);
    });
    if (!closed) throw errors.requestNotFound();
    await this.deps.audit.record({
      actor,
      action: 'requests.close',
      object: `request:${id}`,
      details: `by an operator; owner #${request.ownerId} files=${request.files} bytes=${request.bytes}`,
    });
    return { ...request, closed: true };
  }

  private async ownerIdOf(login: string | undefined): Promise<number | undefined> {
    const text = login?.trim() ?? '';
    if (text === '') return undefined;
    const owner = await this.deps.store.accounts.byLogin(text);
    if (!owner) throw new InputError(`no account with login "${text}"`);
    return owner.id;
  }

  private async targetName(share: ShareRecord): Promise<string> {
    const { store } = this.deps;
    const row = share.fileId !== null ? await store.files.byId(share.fileId) : share.folderId !== null ? await store.folders.byId(share.folderId) : null;
    return row?.name ?? '';
  }

  private async loginsOf(ids: number[]): Promise<Map<number, string>> {
    const accounts = await Promise.all([...new Set(ids)].map((id) => this.deps.store.accounts.byId(id)));
    return new Map(accounts.flatMap((a) => (a ? [[a.id, a.login] as const] : [])));
  }
}

function nextOf<T extends { createdAt: number; id: string }>(rows: T[], page: T[], limit: number): { createdAt: number; id: string } | null {
  const last = page.at(-1);
  return rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null;
}
