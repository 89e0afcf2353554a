import type { FastifyInstance } from 'fastify';
import { openServices, type ServiceOptions, type Services } from './composition.js';
import { type Config, resolveUrls } from './config/config.js';
import { buildApp } from './http/app.js';
import { LEASE_MS } from './limits/reservations-service.js';
import { RunningElsewhereError } from './services/run-alone.js';
import { scheduleRuns } from './services/schedule.js';

/** A running server. */
export interface RunningServer {
  app: FastifyInstance;
  services: Services;
  /** {base_url} */
  baseUrl: string;
  /** {web_url} */
  webUrl: string;
  /** The operator's first password, when this start created the operator account. */
  bootstrap: { login: string; password: string } | null;
  /** Stops accepting, lets the requests in progress finish (up to --shutdown-grace), closes the database. */
  close(): Promise<void>;
}

/** After the grace's cut, how long a stop still waits for connections to go. */
const CUT_WAIT_MS = 5_000;

/** How often the site's totals are folded: a minute of uploads at 1,000/s is 60,000 short rows to sum. */
const TOTALS_FOLD_MS = 60_000;

/** config → services → app → listen (STYLE.md: main.ts). */
export async function startServer(config: Config, options: ServiceOptions = {}): Promise<RunningServer> {
  const services = await openServices(config, options);
  try {
    // Decided before listening, done after: a visitor who signs up in between (--signup
    // open) must not take the first start's operator away.
    const firstStart = await services.accounts.hasNoAccounts();
    // Transfers an earlier process of this server left (a crash, a kill) are settled at
    // their last checkpoint before this one serves: nobody pays for bytes never sent.
    const leftover = await services.reservations.settleAbandoned({ ofThisServer: true });
    // Upload locks an earlier process of this server held are free: a client resuming
    // right after the restart need not wait for their leases to run out.
    await services.resumable.locker.releaseEarlierProcesses();
    // Shared limits connect before the first request; a Redis that is down only warns.
    await services.limits.redis?.connect();
    const { app, links, lifecycle } = await buildApp({ services, logLevel: config.logLevel });
    // With a fixed port the URLs are known before the first request can arrive; with
    // port 0 (tests) they are set right after listen.
    if (config.port !== 0) links.configure(resolveUrls(config, { host: config.host, port: config.port }));
    await app.listen({ port: config.port, host: config.host });
    // The first operator is created only once the server listens: a first start that
    // cannot (the port taken) must not leave an `admin` whose password nobody saw. The
    // next start that listens creates it and shows the password (issue 12).
    let bootstrap: RunningServer['bootstrap'] = null;
    try {
      if (firstStart) bootstrap = await services.accounts.createFirstOperator();
    } catch (error) {
      await app.close();
      throw error;
    }
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const urls = resolveUrls(config, { host: config.host, port });
    links.configure(urls);
    if (config.metricsToken === null && !isLoopback(config.host)) {
      app.log.warn({ host: config.host }, 'GET /metrics answers anyone who reaches this address: set --metrics-token, or keep the port private');
    }
    if (services.store.newerMigrations.length > 0) {
      app.log.warn(
        { migrations: services.store.newerMigrations },
        'a newer version has migrated the database further; this server runs on it (migrations are additive)',
      );
    }
    if (leftover.settled > 0) app.log.warn({ reservations: leftover }, 'settled transfers an earlier process left');
    // Between gc runs, the transfers of a server that died for good are settled once their
    // lease runs out: a cheap indexed read when there are none.
    const settling = scheduleRuns({ run: () => services.reservations.settleAbandoned({ ofThisServer: false }) }, LEASE_MS, {
      onError: (error) => app.log.error(error, 'settling expired reservations failed'),
    });
    // The site's totals: the rows writers appended since the last fold become one per kind.
    const folding = scheduleRuns({ run: () => services.gc.foldTotals() }, TOTALS_FOLD_MS, {
      onError: (error) => app.log.error(error, 'folding the site totals failed'),
    });
    const gc = scheduleRuns(services.gc, config.gcIntervalMs, {
      onReport: (report) => app.log.info({ gc: report }, 'gc done'),
      onError: (error) => {
        if (error instanceof RunningElsewhereError) app.log.info({ holder: error.holder }, 'gc skipped: another server is running it');
        else app.log.error(error, 'gc failed');
      },
    });
    return {
      app,
      services,
      ...urls,
      bootstrap,
      close: async () => {
        // From here /readyz answers 503 and every response closes its connection.
        lifecycle.draining = true;
        // No new gc run, and the one in progress finishes before the database closes.
        const background = Promise.all([gc.stop(), settling.stop(), folding.stop()]);
        // app.close() stops accepting and waits for the requests in progress, uploads
        // included, for up to the grace; then what is left is cut. Connections that turn
        // idle meanwhile (a keep-alive client between two requests) are closed at once.
        const sweeper = setInterval(() => app.server.closeIdleConnections(), 100);
        const cut = setTimeout(() => {
          app.log.warn({ graceMs: config.shutdownGraceMs }, 'shutdown grace over: cutting the requests still in progress');
          app.server.closeAllConnections();
        }, config.shutdownGraceMs);
        // A socket Node handed over (a refused CONNECT, a raw answer) is beyond
        // closeAllConnections: a few seconds after the cut, stop waiting for it.
        let deadline: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            app.close(),
            new Promise<void>((resolve) => {
              deadline = setTimeout(() => {
                app.log.warn('connections still open after the shutdown grace: stopping without them');
                resolve();
              }, config.shutdownGraceMs + CUT_WAIT_MS);
            }),
          ]);
        } finally {
          clearInterval(sweeper);
          clearTimeout(cut);
          clearTimeout(deadline);
        }
        await background;
        await services.close();
      },
    };
  } catch (error) {
    await services.close();
    throw error;
  }
}

/** Whether `host` is reachable from this machine only. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}
