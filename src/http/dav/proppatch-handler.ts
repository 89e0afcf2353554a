import { DavError } from './dav-errors.js';
import type { DavExchange } from './dav-exchange.js';

/** TO BE BUILT (issue 27). */
export async function handleProppatch(_dav: DavExchange): Promise<void> {
  throw new DavError(501, 'Not built yet');
}
