import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import type { Account, FileRecord } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { html } from '../html.js';
import { apiKeyOf } from '../plugins/api-auth.js';
import { humanSize } from './format.js';
import { sendErrorPage, sendPage } from './layout.js';
import { signInUrl } from './return-path.js';
import { loadWebSession } from './session-plugin.js';

/** The services this module calls. */
type Context = HttpContext<'clock' | 'config' | 'directLinks' | 'sessions'>;

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Whether a direct-link request is a person's browser opening the link rather than an
 * API client: no Authorization header, and a top-level navigation (browsers send
 * `Sec-Fetch-Mode: navigate` and an Accept naming text/html; older ones only the
 * latter). API clients send neither, and keep SPEC.md's answers byte for byte.
 */
export function isBrowserNavigation(context: Context, request: FastifyRequest): boolean {
  // With --direct-link-requires-key false the signed URL alone downloads: nothing to add.
  if (!context.services.config.directLinkRequiresKey || apiKeyOf(request) !== undefined) return false;
  const mode = header(request, 'sec-fetch-mode');
  if (mode !== undefined && mode !== 'navigate') return false;
  return /text\/html/.test(header(request, 'accept') ?? '');
}

/**
 * Whether the navigation began on this site or with the person themself (typed, a
 * bookmark, another app: `Sec-Fetch-Site: none`). A link on another site may not spend
 * the owner's traffic through their cookie (SameSite=Lax cookies ride along on top-level
 * navigations). A browser without Sec-Fetch headers is judged by its Referer, which our
 * pages send to this origin only (Referrer-Policy: same-origin).
 */
function startedHere(context: Context, request: FastifyRequest): boolean {
  const site = header(request, 'sec-fetch-site');
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const referer = header(request, 'referer');
  if (referer === undefined) return false;
  try {
    return new URL(referer).origin === new URL(context.links.webUrl).origin;
  } catch {
    return false;
  }
}

/**
 * A direct link opened in a browser (docs/api.md "Direct links in a browser"): the owner's
 * live site session stands in for the API key when the navigation started on this site
 * (or was typed); the download is then served and charged exactly as for the API. Any
 * other case gets a page saying what to do: sign in (and come back here), open it from
 * the owner's account, or confirm a download that another site started.
 */
export async function directInBrowser(
  context: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  serve: (file: FileRecord, account: Account) => Promise<FastifyReply>,
): Promise<FastifyReply> {
  const { services } = context;
  const { id, token } = request.params as { id: string; token: string };
  try {
    const { accountId } = services.directLinks.checkDirectToken(id, token);
    const session = await loadWebSession(context, request, reply);
    const path = request.url;
    if (!session) {
      return sendPage(
        reply,
        401,
        'Sign in to download',
        html`<section class="card narrow direct-page">
<h1>Sign in to download</h1>
<p>This is a premium direct link. In a browser it works for the account it belongs to, once that account is signed in here.</p>
<p><a class="button" href="${signInUrl(path)}">Sign in and download</a></p>
<p class="meta">Download programs send the account’s API key instead (see <a href="/developers#links">the API reference</a>). To share a file with others, send its download page link.</p>
</section>`,
      );
    }
    if (session.account.id !== accountId) {
      return sendErrorPage(
        reply,
        403,
        'Another account’s link',
        'This direct link belongs to another account than the one signed in here. Ask its owner for the file’s download page link instead.',
      );
    }
    const { file, account } = await services.directLinks.authorizeDirectForSession(id, token, session.account);
    if (!startedHere(context, request)) {
      // No byte and no traffic yet: the owner confirms with a link on this site.
      return sendPage(
        reply,
        200,
        `Download ${file.name}`,
        html`<section class="card narrow direct-page">
<h1>Download “${file.name}”?</h1>
<p>Another site sent you to this direct link. Downloading uses ${humanSize(file.size)} of your premium traffic (${humanSize(account.trafficLeft)} left).</p>
<p><a class="button" href="${path}" download>Download <span class="button-note">${humanSize(file.size)}</span></a></p>
<p class="meta">Didn’t mean to? Just close this page; nothing was counted.</p>
</section>`,
      );
    }
    return await serve(file, account);
  } catch (error) {
    if (!(error instanceof ApiError) || reply.sent) throw error;
    return sendErrorPage(reply.headers(error.headers), error.status, error.status === 404 ? 'Link not found' : 'Cannot download', error.message);
  }
}
