import type { Services } from '../services/services.js';
import type { Links } from './links.js';

/** What every route module receives. */
export interface HttpContext {
  services: Services;
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
