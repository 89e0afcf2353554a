import type { FileRecord, Folder } from '../domain/types.js';

/**
 * A file name as one URL path segment: everything but RFC 3986 unreserved characters is
 * percent-encoded (encodeURIComponent leaves !'()* alone, and a `'` would then be written
 * as `&apos;` in an href, which regex clients would read literally).
 */
const encodeName = (name: string) => encodeURIComponent(name).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The public URLs of API.md section 1, built from {web_url}. The URLs are set once the
 * server knows its address (a port of 0 is only known after listen).
 */
export class Links {
  /** {base_url}, no trailing slash. */
  baseUrl = '';
  /** {web_url}, no trailing slash. */
  webUrl = '';

  /** Sets the addresses; called once, before the first request is served. */
  configure(urls: { baseUrl: string; webUrl: string }): void {
    this.baseUrl = urls.baseUrl;
    this.webUrl = urls.webUrl;
  }

  /** {ed_namespace}: the developers page. */
  get namespace(): string {
    return `${this.webUrl}/developers`;
  }

  /** download_link: `/<file_id>/<url-encoded name>`. */
  download(file: Pick<FileRecord, 'id' | 'name'>): string {
    return `${this.webUrl}/${file.id}/${encodeName(file.name)}`;
  }

  /** delete_link: `/<file_id>/delete/<secret>`. */
  delete(file: Pick<FileRecord, 'id'>, secret: string): string {
    return `${this.webUrl}/${file.id}/delete/${secret}`;
  }

  /** folder_link: `/folder/<folder_id>`. */
  folder(folder: Pick<Folder, 'id'>): string {
    return `${this.webUrl}/folder/${folder.id}`;
  }

  /** share_link (issue 25): `/s/<share_id>`. */
  share(share: { id: string }): string {
    return `${this.webUrl}/s/${share.id}`;
  }

  /** request_link: `/r/<request id>`, an upload request's page (issue 25). */
  uploadRequest(request: { id: string }): string {
    return `${this.webUrl}/r/${request.id}`;
  }

  /** direct link: `/direct/<file_id>/<token>/<url-encoded name>`. */
  direct(file: Pick<FileRecord, 'id' | 'name'>, token: string): string {
    return `${this.webUrl}/direct/${file.id}/${token}/${encodeName(file.name)}`;
  }
}
