import type { FastifyRequest } from 'fastify';
import type { LinkCredentials } from '../sharing/upload-requests-service.js';

/** The header a script gives a share's or request's password in (never the URL: issue 25). */
export const SHARE_PASSWORD_HEADER = 'Filehaven-Share-Password';

/** The password header (the first, when repeated), the link's cookie, and the client's address. */
export function linkCredentials(request: FastifyRequest, cookieName: string): LinkCredentials {
  const header = request.headers[SHARE_PASSWORD_HEADER.toLowerCase()];
  const password = Array.isArray(header) ? header[0] : header;
  return { password, token: request.cookies?.[cookieName], ip: request.ip };
}
