import type { FileRecord } from '../../domain/types.js';
import { linkEl, textEl, type XmlElement } from '../atom.js';
import type { Links } from '../links.js';

/**
 * Entry children of an upload or copy result (SPEC.md; API.md 3). Without a delete secret
 * (a resumable upload answered again after the request that stored it) there is no delete
 * link: the secret is shown once.
 */
export function createdFileEntry(links: Links, file: FileRecord, deleteSecret: string | null, deleteRel: 'self' | 'related'): XmlElement[] {
  const entry = [
    textEl('id', file.id),
    textEl('title', file.name),
    textEl('ed:size', file.size),
    linkEl(['title', 'download_link'], ['href', links.download(file)], ['rel', 'enclosure'], ['length', file.size]),
  ];
  if (deleteSecret !== null) entry.push(linkEl(['title', 'delete_link'], ['href', links.delete(file, deleteSecret)], ['rel', deleteRel]));
  return entry;
}
