/** The methods /dav answers (RFC 4918 class 1 and 2), in the order Allow names them. */
export const DAV_METHODS = ['OPTIONS', 'PROPFIND', 'PROPPATCH', 'GET', 'HEAD', 'PUT', 'MKCOL', 'DELETE', 'COPY', 'MOVE', 'LOCK', 'UNLOCK'] as const;

/** One of them. */
export type DavMethod = (typeof DAV_METHODS)[number];

/** The Allow header of a resource where one method does not apply (PUT on a collection, MKCOL where something is). */
export function allowAllBut(method: DavMethod): string {
  return DAV_METHODS.filter((allowed) => allowed !== method).join(', ');
}
