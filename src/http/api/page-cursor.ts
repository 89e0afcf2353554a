import { errors } from '../../domain/errors.js';
import { ID_PATTERN, LINK_ID_PATTERN } from '../../domain/ids.js';
import type { ListPosition } from '../../services/listing-service.js';

/** Which listing a cursor belongs to; a cursor of one is refused by the other. */
export type CursorKind = 'files' | 'folders' | 'shares' | 'requests';

const TAGS: Record<CursorKind, string> = { files: 'f', folders: 'd', shares: 's', requests: 'r' };
/** What the ids of each listing look like. */
const ID_PATTERNS: Record<CursorKind, RegExp> = { files: ID_PATTERN, folders: ID_PATTERN, shares: LINK_ID_PATTERN, requests: LINK_ID_PATTERN };
/** Far longer than any cursor this module writes (about 40 characters). */
const MAX_CURSOR_LENGTH = 128;

/**
 * The opaque `cursor` of a listing's next link: the keyset position (created_at, id) of
 * the previous page's last item, tagged with the listing, base64url-encoded. It needs no
 * signature: the owner filter is applied on every page, so an edited cursor can only move
 * the caller within the caller's own list.
 */
export function encodeCursor(kind: CursorKind, position: ListPosition): string {
  return Buffer.from(`${TAGS[kind]}:${position.createdAt}:${position.id}`, 'utf8').toString('base64url');
}

/** Reads a cursor back; anything this module did not write is errorBadRequest (400), never a 500. */
export function decodeCursor(kind: CursorKind, cursor: string): ListPosition {
  const bad = () => errors.badRequest('cursor is not valid; use the next link of the previous page');
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  // Only the canonical encoding is accepted (base64url decoding ignores stray bits).
  if (Buffer.from(text, 'utf8').toString('base64url') !== cursor) throw bad();
  const match = /^([a-z]):(0|[1-9][0-9]{0,15}):([^:]*)$/.exec(text);
  if (!match || match[1] !== TAGS[kind] || !ID_PATTERNS[kind].test(match[3]!)) throw bad();
  const createdAt = Number(match[2]);
  if (!Number.isSafeInteger(createdAt)) throw bad();
  return { createdAt, id: match[3]! };
}
