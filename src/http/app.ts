import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Services } from '../composition.js';
import { ApiError, errors } from '../domain/errors.js';
import { registerAccountRoutes } from './api/account-routes.js';
import { registerApiKeyRoutes } from './api/apikeys-routes.js';
import { registerDirectDownloadRoute } from './api/direct-download-route.js';
import { registerFileRoutes } from './api/files-routes.js';
import { registerFolderRoutes } from './api/folders-routes.js';
import { registerRequestRoutes } from './api/requests-routes.js';
import { registerShareRoutes } from './api/shares-routes.js';
import { capConnectionsPerAddress, refusedByConnectionCap } from './connection-cap.js';
import type { HttpContext, ServerLifecycle } from './context.js';
import { registerDavRoutes } from './dav/dav-routes.js';
import { registerHealthRoutes } from './health-routes.js';
import { lingerOnRefusedBodies } from './lingering-close.js';
import { Links } from './links.js';
import { serializeRequestForLog } from './log-redaction.js';
import { registerMetricsRoute } from './metrics-route.js';
import { registerApiRateLimit } from './plugins/api-rate-limit.js';
import { rawAtomErrorResponse, sendAtomError } from './plugins/atom-reply.js';
import { registerBodyParsers } from './plugins/body-parsers.js';
import { registerErrorHandling } from './plugins/error-handler.js';
import { registerEveryMethod } from './plugins/method-dispatch.js';
import { registerProtocolChecks } from './plugins/protocol-checks.js';
import { registerRequestMetrics } from './plugins/request-metrics.js';
import { answerClientError, registerRawAnswers } from './raw-answers.js';
import { registerTusRoutes } from './tus/tus-routes.js';
import { registerAccountPages } from './web/account-pages.js';
import { registerConsole } from './web/console/console-routes.js';
import { registerCopyToAccount } from './web/download-page.js';
import { registerFilePages } from './web/file-pages.js';
import { registerFolderPage } from './web/folder-page.js';
import { registerFolderZip } from './web/folder-zip.js';
import { registerMyFiles } from './web/my-files-page.js';
import { registerMyFilesUpload } from './web/my-files-upload.js';
import { registerMySharesPage } from './web/my-shares-routes.js';
import { registerOidcPages } from './web/oidc-pages.js';
import { registerPasskeyPages } from './web/passkey-pages.js';
import { registerProfilePage } from './web/profile-page.js';
import { registerRequestPages } from './web/request-routes.js';
import { registerSecondFactorPages } from './web/second-factor-pages.js';
import { registerSessions } from './web/session-plugin.js';
import { registerSharePages } from './web/share-pages.js';
import { registerSitePages } from './web/site-pages.js';

export interface AppOptions {
  services: Services;
  /** pino level or "silent". */
  logLevel?: string;
}

/** The Fastify app with every route; `links` is configured once the address is known. */
export async function buildApp(options: AppOptions): Promise<{ app: FastifyInstance; links: Links; lifecycle: ServerLifecycle }> {
  const level = options.logLevel ?? 'info';
  const config = options.services.config;
  const app = Fastify({
    // The request URL is logged with its secrets replaced (query values, delete and direct link tokens).
    logger: level === 'silent' ? false : { level, serializers: { req: serializeRequestForLog } },
    // Slow clients (issue 7, SECURITY.md): the request head must arrive within
    // headersTimeout; after that, a request connection silent in both directions for
    // idleTimeout is closed. Uploads of many GiB over slow links take hours, so there is
    // no overall request timeout: any byte that arrives keeps the upload alive.
    http: {
      headersTimeout: config.headersTimeoutMs,
      // How often Node checks the headers timeout (its default, 30 s, would let a slow
      // head live up to 30 s past it).
      connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
      // A request without Host gets the Atom error of the onRequest check below, not
      // Node's bodiless 400.
      requireHostHeader: false,
    },
    requestTimeout: 0,
    // Every request's log lines carry its id, and so does its response (X-Request-Id), so an
    // operator can find a client's request in the logs of a fleet. A proxy we trust may
    // hand its own id on; a client may not write into our logs.
    genReqId: () => randomUUID(),
    requestIdHeader: config.trustProxy ? 'x-request-id' : false,
    connectionTimeout: config.idleTimeoutMs,
    // Above the 60 s idle timeout of common load balancers, so they close first.
    keepAliveTimeout: 65_000,
    clientErrorHandler: (error, socket) => answerClientError(context, error, socket, (message) => app.log.debug(message)),
    // Download links carry a 255-byte name, url-encoded up to three times longer.
    routerOptions: { maxParamLength: 2048 },
    // Requests arriving on open connections while the server drains are served, with
    // Connection: close (registerProtocolChecks), not refused.
    return503OnClosing: false,
    // The client address of the per-IP limits: behind a reverse proxy, the one address it
    // adds to X-Forwarded-For (one trusted hop, so a client cannot forge its own).
    trustProxy: config.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    // A URL the router cannot decode (bad %-escape, over-long segment) gets the Atom error
    // shape like every other API answer (API.md 2), not Fastify's JSON.
    frameworkErrors: (error, request, reply) => {
      const status = error.statusCode ?? 400;
      const why = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'Request URL too long' : 'Malformed request URL';
      sendAtomError(context, request, reply, status >= 500 ? errors.internal() : new ApiError('errorBadRequest', status, why));
    },
  });
  const links = new Links();
  const lifecycle: ServerLifecycle = { draining: false };
  const context: HttpContext = { services: options.services, links, lifecycle };
  registerRawAnswers(app.server, context);
  lingerOnRefusedBodies(app.server);
  if (config.maxConnectionsPerIp > 0 && !config.trustProxy) {
    capConnectionsPerAddress(app.server, config.maxConnectionsPerIp, () => {
      options.services.metrics.limitRefused('connections-per-ip');
      return rawAtomErrorResponse(context, errors.tooManyConnections());
    });
    // A request on a connection already open while its address is at the cap: answered
    // before anything else runs, and the connection closes after the answer.
    app.addHook('onRequest', (request, reply, done) => {
      if (!refusedByConnectionCap(request.raw)) return done();
      options.services.metrics.limitRefused('connections-per-ip');
      reply.header('Connection', 'close');
      done(errors.tooManyConnections());
    });
  }

  registerEveryMethod(app);
  registerRequestMetrics(app, context);
  await registerBodyParsers(app);
  await registerSessions(app, context);
  registerErrorHandling(app, context);
  registerProtocolChecks(app, lifecycle);
  registerHealthRoutes(app, context);
  registerMetricsRoute(app, context);
  registerApiRateLimit(app, context);
  registerApiKeyRoutes(app, context);
  registerFileRoutes(app, context);
  registerFolderRoutes(app, context);
  registerShareRoutes(app, context);
  registerRequestRoutes(app, context);
  registerTusRoutes(app, context);
  registerDavRoutes(app, context);
  registerAccountRoutes(app, context);
  registerDirectDownloadRoute(app, context);
  registerFilePages(app, context);
  registerCopyToAccount(app, context);
  registerFolderPage(app, context);
  registerFolderZip(app, context);
  registerSharePages(app, context);
  registerSitePages(app, context);
  registerAccountPages(app, context);
  registerSecondFactorPages(app, context);
  registerPasskeyPages(app, context);
  registerOidcPages(app, context);
  registerProfilePage(app, context);
  registerMyFiles(app, context);
  registerMyFilesUpload(app, context);
  registerMySharesPage(app, context);
  registerRequestPages(app, context);
  registerConsole(app, context);
  return { app, links, lifecycle };
}
