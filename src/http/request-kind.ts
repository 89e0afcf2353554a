import type { FastifyRequest } from 'fastify';
import { rememberRecent } from '../domain/remember-recent.js';
import { API_PATH_WORDS } from './api/api-catalogue.js';
import { decodeSegment, pathSegments } from './request-target.js';

/**
 * Whether a request is for the API rather than the web pages, /direct/ downloads or
 * /healthz. Decided from the route the router matched (so `/%61ccount` or an
 * absolute-form target or `//account` cannot dodge the count), else from the decoded path.
 */
export function isApiRequest(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  return route ? isApiRoute(route) : isApiPath(request.url);
}

// Routes are few and fixed: each is judged once (this runs on every request).
const isApiRoute = rememberRecent((route: string) => isApiWord(pathSegments(route)[0]));

/** Whether a request target's first (decoded) path word is one of the API's. */
export function isApiPath(url: string): boolean {
  return isApiWord(pathSegments(url).map(decodeSegment)[0]);
}

/** First path words of the API (API.md 1: API and web paths never collide), from the catalogue. */
function isApiWord(first: string | undefined): boolean {
  return first !== undefined && API_PATH_WORDS.has(first.split(';')[0]!);
}

/** Whether the client reads HTML (a browser) rather than Atom. */
export function wantsHtml(request: FastifyRequest): boolean {
  return /text\/html/.test(request.headers.accept ?? '');
}
