/** File states as API.md section 4 spells them on the wire. */
export const FileStatus = { Active: 'A', Blocked: 'B', Deleted: 'D' } as const;
export type FileStatus = (typeof FileStatus)[keyof typeof FileStatus];

export function isFileStatus(value: string): value is FileStatus {
  return value === 'A' || value === 'B' || value === 'D';
}

/** An account as the services see it; secrets stay in the repository layer. */
export interface Account {
  /** Numeric id, the `id` of GET /account. */
  id: number;
  /** Unique sign-in name. */
  login: string;
  /** Owner's display name (may be empty). */
  name: string;
  /** Owner's e-mail (may be empty). */
  email: string;
  /** Balance in cents; shown with two decimals. */
  balanceCents: number;
  /** Premium period start (epoch ms) or null when never set. */
  premiumStart: number | null;
  /** Premium period end, exclusive (epoch ms) or null when never set. */
  premiumEnd: number | null;
  /** Bytes of premium traffic left. */
  trafficLeft: number;
  /** Operators may use the admin functions of the site. */
  isOperator: boolean;
  /** A disabled account cannot sign in and its key stops working. */
  disabled: boolean;
  /** Creation time (epoch ms). */
  createdAt: number;
}

/** A file row: a name and an owner pointing at a content-addressed blob. */
export interface FileRecord {
  /** Public id, 10 characters of A-Z0-9. */
  id: string;
  /** Owning account. */
  ownerId: number;
  /** Folder the file sits in, null for the account's root. */
  folderId: string | null;
  /** Sanitised file name. */
  name: string;
  /** Size in bytes. */
  size: number;
  /** Hex SHA-256 of the content: the blob's address. */
  sha256: string;
  /** A, B or D. */
  status: FileStatus;
  /** Upload (or copy) time, epoch ms. */
  createdAt: number;
  /** Number of completed download starts. */
  downloads: number;
  /** Time of the last download start, epoch ms. */
  lastDownloadAt: number | null;
  /** From this moment (epoch ms) the file behaves as deleted (isExpired); null = never. */
  expiresAt: number | null;
}

/**
 * Whether a file has reached its expiry at `now` (issue 25): from that moment it behaves
 * as deleted everywhere, decided per request, whether or not gc has marked it yet. The
 * repositories' `liveAt` filters are the same rule in SQL (repositories/rows.ts unexpiredAt).
 */
export function isExpired(file: Pick<FileRecord, 'expiresAt'>, now: number): boolean {
  return file.expiresAt !== null && file.expiresAt <= now;
}

/** A folder of one account. */
export interface Folder {
  /** Public id, 10 characters of A-Z0-9. */
  id: string;
  /** Owning account. */
  ownerId: number;
  /** Parent folder, null at the top. */
  parentId: string | null;
  /** Display name. */
  name: string;
  /** Creation time, epoch ms. */
  createdAt: number;
}

/** Premium state names of API.md section 5. */
export type PremiumState = 'Active' | 'Expired' | 'None';

export function premiumState(account: Pick<Account, 'premiumStart' | 'premiumEnd'>, now: number): PremiumState {
  if (account.premiumStart === null || account.premiumEnd === null) return 'None';
  if (now >= account.premiumStart && now < account.premiumEnd) return 'Active';
  return now < account.premiumStart ? 'None' : 'Expired';
}
