/** What the SDK's calls return: the API's Atom entries (SPEC.md, API.md 3 and 7) as typed objects. */

/** A file state the API shows (API.md 4): A active, B blocked; deleted files are gone. */
export type FileStatus = 'A' | 'B';

/** An uploaded or copied file (`File upload result`, `File copy`). */
export interface StoredFile {
  /** File id. */
  id: string;
  /** File name as stored (the server strips directories and control characters). */
  name: string;
  /** Size in bytes. */
  size: number;
  /** The public download page (API.md 1, download_link). */
  downloadLink: string;
  /**
   * The link that deletes the file: a secret, shown this once. Absent only when a tus
   * upload had been completed by an earlier, interrupted run: the answer that completed
   * it carried the link, and nobody read it (`deleteFile` still removes the file).
   */
  deleteLink?: string;
  /**
   * When the file expires (the answer's `Filehaven-Expires` header), present only when
   * it does: asked with `expiresIn`, or the site's default expiry.
   */
  expires?: string;
}

/** One file of your listing (`File list`). */
export interface FileSummary {
  id: string;
  name: string;
  size: number;
  status: FileStatus;
  /** Folder id, or null at the top. */
  folderId: string | null;
  /** Upload time, `YYYY-MM-DD HH:MM:SS` UTC. */
  created: string;
  downloadLink: string;
}

/** A page of a listing; `nextCursor` fetches the next one (null on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** File details (`File Full info`, premium). */
export interface FileDetails {
  id: string;
  name: string;
  status: FileStatus;
  size: number;
  downloadLink: string;
  /** When the file expires (`Filehaven-Expires`, issue 25), present only when it does. */
  expires?: string;
}

/** A direct download link (`File info`, premium): signed, expiring, needs the key too. */
export interface DirectLink {
  id: string;
  name: string;
  size: number;
  /** The signed URL. */
  url: string;
}

/** Premium state (API.md 5). */
export type PremiumState = 'Active' | 'Expired' | 'None';

/** Account and premium details (`Account Info`). */
export interface AccountInfo {
  id: string;
  name: string;
  email: string;
  /** Decimal with two places, as sent (`12.50`). */
  balance: string;
  premium: PremiumState;
  /** `YYYY-MM-DD HH:MM:SS` UTC, or null when unset. */
  premiumStart: string | null;
  premiumEnd: string | null;
  /** Bytes of premium traffic left. */
  premiumTrafficLeft: number;
}

/** One of your folders (`Folder list`, `Folder`). */
export interface FolderSummary {
  id: string;
  name: string;
  /** Parent folder id, or null at the top. */
  parentId: string | null;
  /** The public folder page. */
  folderLink: string;
  /** Bytes of its active files. */
  size: number;
  /** Number of its active files (absent on a folder just created). */
  files?: number;
}

/** A folder with one page of its content (`GET /folders/<id>`). */
export interface FolderListing {
  folder: FolderSummary;
  /** Sub-folders: sent with the first page only. */
  subfolders: Array<{ id: string; name: string; folderLink: string }>;
  files: Array<{ id: string; name: string; size: number; downloadLink: string }>;
  nextCursor: string | null;
}

/** The answer of a move (`Add files to folder`). */
export interface MoveResult {
  folderId: string;
  folderLink: string;
  /** Bytes of the folder's active files after the move. */
  folderSize: number;
  /** Files moved. */
  moved: number;
}

/** A deleted file or folder. */
export interface DeletedItem {
  id: string;
  name: string;
}

/** A share of one of your files or folders (`Share`, issue 25). */
export interface Share {
  /** Share id: 22 letters and digits, unguessable. */
  id: string;
  /** The shared file's or folder's name. */
  name: string;
  /** The share's page for people, `{web_url}/s/<id>`: what you hand out. */
  link: string;
  /** The shared file's or folder's id. */
  target: string;
  /** When it stops working, `YYYY-MM-DD HH:MM:SS` UTC; null: never. */
  expires: string | null;
  /** Downloads allowed in all; null: unlimited. */
  maxDownloads: number | null;
  /** Downloads counted so far (a response that starts at byte 0 counts one). */
  downloads: number;
  /** Whether a password guards it. */
  protected: boolean;
  /** Whether it is served uncapped on the owner's premium traffic. */
  fast: boolean;
}

/** An upload request: a link where others upload into one of your folders (`Upload request`, issue 25). */
export interface UploadRequest {
  /** Request id: 22 letters and digits, unguessable. */
  id: string;
  /** Its title ('' when none). */
  title: string;
  /** The request's page for people, `{web_url}/r/<id>`: what you hand out. */
  link: string;
  /** The folder the files land in; null: the top of the account. */
  folderId: string | null;
  /** When it stops taking files, `YYYY-MM-DD HH:MM:SS` UTC; null: never. */
  expires: string | null;
  /** Files it takes in all; null: unlimited. */
  maxFiles: number | null;
  /** Files received so far. */
  files: number;
  /** Bytes it takes in all files together; null: unlimited. */
  maxBytes: number | null;
  /** Bytes received so far. */
  bytes: number;
  /** Whether a password guards it. */
  protected: boolean;
  /** The largest file it takes, in bytes; null: the owner's own limit only. */
  maxFileSize: number | null;
  /** The message shown to uploaders ('' when none). */
  message: string;
}

/** A file uploaded into an upload request (`Upload request upload`): the uploader gets no link into the owner's account. */
export interface RequestUpload {
  id: string;
  name: string;
  size: number;
}

/** A file's expiry after a change (`File expiry`). */
export interface FileExpiry {
  id: string;
  name: string;
  /** When it expires, `YYYY-MM-DD HH:MM:SS` UTC; null: never. */
  expires: string | null;
}
