import type { DavExchange } from './dav-exchange.js';

/**
 * OPTIONS (RFC 4918 9.1 and 18; RFC 9110 9.3.7): what the server can do, before any
 * sign-in, since clients probe with it first. 200 with Allow naming every method the
 * /dav routes take (the route's own list, so it cannot drift from the handlers), the DAV
 * classes (set by the routes on every answer) and no body.
 */
export async function handleOptions(dav: DavExchange): Promise<void> {
  const methods = dav.request.routeOptions.method;
  const allow = (Array.isArray(methods) ? methods : [methods]).join(', ');
  dav.reply.code(200).header('Allow', allow).header('Content-Length', '0').send();
}
