import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { API_PATH_WORDS } from '../api/api-catalogue.js';
import type { HttpContext } from '../context.js';
import { apiKeyOf } from './api-auth.js';
import { requestPath } from './atom-reply.js';

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

/**
 * The request rate of API clients (config apiRatePerKey, apiRatePerIp): every API
 * request is counted before its body is read, and one past the limit gets
 * errorRateLimited with Retry-After in the Atom error shape. The client address is
 * Fastify's request.ip, which honours the trustProxy setting.
 */
export function registerApiRateLimit(app: FastifyInstance, context: HttpContext): void {
  app.addHook('onRequest', async (request) => {
    if (!isApiRequest(request)) return;
    try {
      await context.services.limits.api.hit(request.ip, apiKeyOf(request));
    } catch (error) {
      // The body is not read: close the connection rather than drain an upload.
      const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
      if (error instanceof ApiError && hasBody) throw new ApiError(error.code, error.status, error.message, { ...error.headers, Connection: 'close' });
      throw error;
    }
  });
}
