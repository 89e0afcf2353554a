import type { Services } from '../services/services.js';
import type { Links } from './links.js';

/** What every route module receives. */
export interface HttpContext {
  services: Services;
  links: Links;
}

/** Route config flags read by the plugins. */
export interface RouteFlags {
  /** Errors render as HTML pages instead of Atom. */
  web?: boolean;
  /** The multipart body is left unread for the handler to stream. */
  streamBody?: boolean;
}
