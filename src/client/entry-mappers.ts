import type {
  AccountInfo,
  DirectLink,
  FileDetails,
  FileExpiry,
  FileStatus,
  FileSummary,
  FolderListing,
  FolderSummary,
  MoveResult,
  RequestUpload,
  Share,
  StoredFile,
  UploadRequest,
} from './api-types.js';
import { type AtomFeed, childrenOf, childText, linkOf, type XmlElement } from './atom-reader.js';
import { FilehavenApiError } from './client-errors.js';

/** Turns Atom entries into the SDK's objects; a missing element is an unexpected answer, never a silent undefined. */

function missing(what: string): never {
  throw new FilehavenApiError('errorUnexpectedResponse', 0, `the answer lacks ${what}`);
}

const text = (entry: XmlElement, name: string): string => childText(entry, name) ?? missing(`<${name}>`);

function count(raw: string | undefined, what: string): number {
  const value = raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  return Number.isSafeInteger(value) ? value : missing(`a whole number in ${what}`);
}

const optional = (raw: string | undefined) => (raw === undefined || raw === '' ? null : raw);

function status(raw: string): FileStatus {
  return raw === 'A' || raw === 'B' ? raw : missing(`a known ed:status (got "${raw}")`);
}

function link(entry: XmlElement, match: Record<string, string>): XmlElement {
  return linkOf(entry, match) ?? missing(`a link ${JSON.stringify(match)}`);
}

/** The only entry of a feed. */
export const firstEntry = (feed: AtomFeed): XmlElement => feed.entries[0] ?? missing('an entry');

/** The cursor of a feed's `next` link, or null on the last page. */
export function nextCursor(feed: AtomFeed): string | null {
  const href = feed.links.next;
  return href === undefined ? null : new URL(href, 'http://x').searchParams.get('cursor');
}

export function storedFile(entry: XmlElement): StoredFile {
  const download = link(entry, { title: 'download_link' });
  return {
    id: text(entry, 'id'),
    name: text(entry, 'title'),
    size: count(childText(entry, 'ed:size') ?? download.attrs.length, 'ed:size'),
    downloadLink: download.attrs.href ?? missing('download_link href'),
    // Absent only from a tus upload answered again once complete (StoredFile.deleteLink).
    ...optionalLink(linkOf(entry, { title: 'delete_link' })?.attrs.href),
  };
}

const optionalLink = (href: string | undefined): { deleteLink?: string } => (href ? { deleteLink: href } : {});

export function fileSummary(entry: XmlElement): FileSummary {
  const download = link(entry, { title: 'download_link' });
  return {
    id: text(entry, 'id'),
    name: text(entry, 'title'),
    size: count(childText(entry, 'ed:size'), 'ed:size'),
    status: status(text(entry, 'ed:status')),
    folderId: optional(childText(entry, 'ed:folder')),
    created: text(entry, 'ed:created'),
    downloadLink: download.attrs.href ?? missing('download_link href'),
  };
}

export function fileDetails(entry: XmlElement): FileDetails {
  const enclosure = link(entry, { rel: 'enclosure' });
  return {
    id: text(entry, 'id'),
    name: text(entry, 'title'),
    status: status(text(entry, 'ed:status')),
    size: count(enclosure.attrs.length, 'the link length'),
    downloadLink: enclosure.attrs.href ?? missing('the link href'),
  };
}

export function directLink(entry: XmlElement): DirectLink {
  const enclosure = link(entry, { rel: 'enclosure' });
  return {
    id: text(entry, 'id'),
    name: text(entry, 'title'),
    size: count(enclosure.attrs.length, 'the link length'),
    url: enclosure.attrs.href ?? missing('the link href'),
  };
}

export function accountInfo(entry: XmlElement): AccountInfo {
  const premium = text(entry, 'ed:premium');
  return {
    id: text(entry, 'id'),
    name: text(entry, 'ed:name'),
    email: text(entry, 'ed:email'),
    balance: text(entry, 'ed:balance'),
    premium: premium === 'Active' || premium === 'Expired' ? premium : 'None',
    premiumStart: optional(childText(entry, 'ed:premium_start')),
    premiumEnd: optional(childText(entry, 'ed:premium_end')),
    premiumTrafficLeft: count(childText(entry, 'ed:premium_trafficLeft') || '0', 'ed:premium_trafficLeft'),
  };
}

export function folderSummary(entry: XmlElement): FolderSummary {
  const folderLink = link(entry, { title: 'folder_link' });
  const files = childText(entry, 'ed:files');
  return {
    id: text(entry, 'id'),
    name: text(entry, 'title'),
    parentId: optional(childText(entry, 'ed:parent')),
    folderLink: folderLink.attrs.href ?? missing('folder_link href'),
    size: count(folderLink.attrs.length, 'the folder_link length'),
    ...(files === undefined ? {} : { files: count(files, 'ed:files') }),
  };
}

export function folderListing(feed: AtomFeed): FolderListing {
  const entry = firstEntry(feed);
  return {
    folder: folderSummary(entry),
    subfolders: childrenOf(entry, 'ed:folder').map((child) => ({
      id: child.attrs.id ?? missing('ed:folder id'),
      name: child.text,
      folderLink: child.attrs.href ?? missing('ed:folder href'),
    })),
    files: childrenOf(entry, 'ed:file').map((child) => ({
      id: child.attrs.id ?? missing('ed:file id'),
      name: child.text,
      size: count(child.attrs.length, 'ed:file length'),
      downloadLink: child.attrs.href ?? missing('ed:file href'),
    })),
    nextCursor: nextCursor(feed),
  };
}

export function moveResult(entry: XmlElement): MoveResult {
  const folderLink = link(entry, { title: 'folder_link' });
  return {
    folderId: text(entry, 'id'),
    folderLink: folderLink.attrs.href ?? missing('folder_link href'),
    folderSize: count(folderLink.attrs.length, 'the folder_link length'),
    moved: count(childText(entry, 'ed:updated'), 'ed:updated'),
  };
}

/** A count that may be empty: empty means no limit (null). */
function limitOf(entry: XmlElement, name: string): number | null {
  const raw = text(entry, name).trim();
  return raw === '' ? null : count(raw, name);
}

function yesNo(entry: XmlElement, name: string): boolean {
  const raw = text(entry, name).trim();
  return raw === 'yes' ? true : raw === 'no' ? false : missing(`yes or no in <${name}> (got "${raw}")`);
}

/** A `Share` entry (issue 25). */
export function share(entry: XmlElement): Share {
  const shareLink = link(entry, { title: 'share_link' });
  return {
    id: text(entry, 'id'),
    name: text(entry, 'title'),
    link: shareLink.attrs.href ?? missing('share_link href'),
    target: text(entry, 'ed:target'),
    expires: optional(text(entry, 'ed:expires').trim()),
    maxDownloads: limitOf(entry, 'ed:max_downloads'),
    downloads: count(childText(entry, 'ed:downloads'), 'ed:downloads'),
    protected: yesNo(entry, 'ed:protected'),
    fast: yesNo(entry, 'ed:fast'),
  };
}

/** An `Upload request` entry (issue 25). */
export function uploadRequest(entry: XmlElement): UploadRequest {
  const requestLink = link(entry, { title: 'request_link' });
  return {
    id: text(entry, 'id'),
    title: childText(entry, 'title') ?? '',
    link: requestLink.attrs.href ?? missing('request_link href'),
    folderId: optional(text(entry, 'ed:folder').trim()),
    expires: optional(text(entry, 'ed:expires').trim()),
    maxFiles: limitOf(entry, 'ed:max_files'),
    files: count(childText(entry, 'ed:files'), 'ed:files'),
    maxBytes: limitOf(entry, 'ed:max_bytes'),
    bytes: count(childText(entry, 'ed:bytes'), 'ed:bytes'),
    protected: yesNo(entry, 'ed:protected'),
    maxFileSize: limitOf(entry, 'ed:max_file_size'),
    message: childText(entry, 'ed:message') ?? '',
  };
}

/** The `Upload request upload` entry: id, name and size only. */
export function requestUpload(entry: XmlElement): RequestUpload {
  return { id: text(entry, 'id'), name: text(entry, 'title'), size: count(childText(entry, 'ed:size'), 'ed:size') };
}

/** The `File expiry` entry. */
export function fileExpiry(entry: XmlElement): FileExpiry {
  return { id: text(entry, 'id'), name: text(entry, 'title'), expires: optional(text(entry, 'ed:expires').trim()) };
}
