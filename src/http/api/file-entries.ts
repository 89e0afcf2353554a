import type { FileRecord } from '../../domain/types.js';
import { linkEl, textEl, type XmlElement } from '../atom.js';
import type { Links } from '../links.js';

/** Entry children of an upload or copy result (SPEC.md; API.md 3). */
export function createdFileEntry(links: Links, file: FileRecord, deleteSecret: string, deleteRel: 'self' | 'related'): XmlElement[] {
  return [
    textEl('id', file.id),
    textEl('title', file.name),
    textEl('ed:size', file.size),
    linkEl(['title', 'download_link'], ['href', links.download(file)], ['rel', 'enclosure'], ['length', file.size]),
    linkEl(['title', 'delete_link'], ['href', links.delete(file, deleteSecret)], ['rel', deleteRel]),
  ];
}
