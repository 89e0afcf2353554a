import type { FastifyRequest } from 'fastify';
import { API_PATH_WORDS } from './api/api-catalogue.js';
import { requestPath } from './plugins/atom-reply.js';

/**
 * Whether a request is for the API rather than the web pages, /direct/ downloads or
 * /healthz. Decided from the route the router matched (so `/%61ccount` or an
 * absolute-form target cannot dodge the count), else from the decoded path.
 */
export function isApiRequest(request: FastifyRequest): boolean {
  const path = request.routeOptions.url ?? decodedPath(request);
  const match = /^\/([^/;]+)/.exec(path);
  // First path words of the API (API.md 1: API and web paths never collide), from the catalogue.
  return match !== null && API_PATH_WORDS.has(match[1]!);
}

function decodedPath(request: FastifyRequest): string {
  try {
    return decodeURIComponent(requestPath(request));
  } catch {
    return requestPath(request);
  }
}

/** Whether the client reads HTML (a browser) rather than Atom. */
export function wantsHtml(request: FastifyRequest): boolean {
  return /text\/html/.test(request.headers.accept ?? '');
}
