import type { Services } from '../composition.js';
import type { Links } from './links.js';

/**
 * What a route module receives. `Uses` names the members of the services it calls, so a
 * module's signature says what it depends on (`HttpContext<'accounts' | 'clock'>`) and it
 * cannot reach the rest; only the app that wires them (app.ts) holds them all.
 */
export interface HttpContext<Uses extends keyof Services = keyof Services> {
  services: Pick<Services, Uses>;
  links: Links;
  lifecycle: ServerLifecycle;
}

/** Where the server is in its life, as load balancers and clients must see it. */
export interface ServerLifecycle {
  /**
   * Set on SIGTERM: `/readyz` answers 503 and every response closes its connection, so no
   * client or proxy sends another request on it while the requests in progress finish.
   */
  draining: boolean;
}

/** Route config flags read by the plugins. */
export interface RouteFlags {
  /** Errors render as HTML pages instead of Atom. */
  web?: boolean;
  /** The multipart body is left unread for the handler to stream. */
  streamBody?: boolean;
}
