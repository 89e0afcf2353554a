import { createCipheriv, createDecipheriv } from 'node:crypto';
import { ID_PATTERN } from '../domain/ids.js';
import type { ServerSecrets } from '../security/secrets.js';

/** What a reference stands for: a file or a folder inside a folder share. */
export type ShareRefKind = 'file' | 'folder';

/** The bytes after the 10-character id: the kind, then a fixed tag that a forged block misses. */
const TAIL: Record<ShareRefKind, string> = { file: 'Ffhref', folder: 'Dfhref' };
/** A reference: one AES block (16 bytes) in base64url. */
const REF_PATTERN = /^[A-Za-z0-9_-]{22}$/;

/**
 * Share-scoped references (issue 25): what a folder share's page and download paths carry
 * instead of the real ids of the files and folders inside it. A real id is a permanent
 * public link (`/<file id>/<name>`, `/folder/<id>`), so writing one into a share's page
 * would outlive the share's revocation, expiry, password and download limit.
 *
 * A reference is one 16-byte block (the id, the kind, a fixed tag) encrypted with
 * AES-256 under a key derived from the server secret and the share id, in base64url
 * (22 characters): it means something only on its own share, and nothing once that share
 * is gone. It only hides the id: whoever reads it back must still check that the object
 * is inside the shared folder's tree now.
 */
export class ShareRefs {
  constructor(private readonly secrets: Pick<ServerSecrets, 'shareRefKey'>) {}

  /** The reference of `id` (a file or folder id) on the share `shareId`. */
  ref(shareId: string, kind: ShareRefKind, id: string): string {
    if (!ID_PATTERN.test(id)) throw new Error(`not an id: ${id}`);
    const cipher = createCipheriv('aes-256-ecb', this.secrets.shareRefKey(shareId), null).setAutoPadding(false);
    return Buffer.concat([cipher.update(`${id}${TAIL[kind]}`, 'latin1'), cipher.final()]).toString('base64url');
  }

  /** The id behind a reference of the share `shareId`; null when it is not one (of this kind, on this share). */
  id(shareId: string, kind: ShareRefKind, ref: string): string | null {
    if (!REF_PATTERN.test(ref)) return null;
    const block = Buffer.from(ref, 'base64url');
    // Only the canonical encoding: base64url decoding ignores stray bits of the last character.
    if (block.length !== 16 || block.toString('base64url') !== ref) return null;
    const decipher = createDecipheriv('aes-256-ecb', this.secrets.shareRefKey(shareId), null).setAutoPadding(false);
    const text = Buffer.concat([decipher.update(block), decipher.final()]).toString('latin1');
    const id = text.slice(0, 10);
    return text.slice(10) === TAIL[kind] && ID_PATTERN.test(id) ? id : null;
  }
}
