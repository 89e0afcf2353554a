import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import type { HttpContext } from '../context.js';
import { isApiRequest } from '../request-kind.js';
import { apiKeyOf } from './api-auth.js';

/** The services this module calls. */
type Context = HttpContext<'limits'>;

/**
 * The request rate of API clients (config apiRatePerKey, apiRatePerIp): every API
 * request is counted before its body is read, and one past the limit gets
 * errorRateLimited with Retry-After in the Atom error shape. The client address is
 * Fastify's request.ip, which honours the trustProxy setting.
 */
export function registerApiRateLimit(app: FastifyInstance, context: Context): void {
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
