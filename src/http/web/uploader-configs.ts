import { create as contentDisposition } from 'content-disposition';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { signInUrl } from './return-path.js';
import { redirectTo } from './session-plugin.js';

/** The services this module calls. */
type Context = HttpContext<'accounts'>;

/** Where the profile hands out the uploader configurations, with the account's key filled in. */
export const SHAREX_PATH = '/accounts/profile/misc/uploaders/sharex';
export const SCRIPT_PATH = '/accounts/profile/misc/uploaders/curl';

/** The host part of the API's address, for file and uploader names. */
const hostOf = (baseUrl: string) => new URL(baseUrl).host;

/**
 * A ShareX custom uploader (.sxcu) for POST /files (API.md 2): the file in the multipart
 * part `upload`, the key alone in Authorization; the links are read out of the Atom
 * answer (API.md 3) with ShareX's `{regex:pattern|group}`. Names are percent-encoded in
 * links, so an href never holds a `"`; none of ShareX's escapes ({ } | \) is needed.
 */
export function sharexConfig(baseUrl: string, apiKey: string): string {
  const config = {
    Version: '15.0.0',
    Name: `filehaven (${hostOf(baseUrl)})`,
    DestinationType: 'ImageUploader, TextUploader, FileUploader',
    RequestMethod: 'POST',
    RequestURL: `${baseUrl}/files`,
    Headers: { Authorization: apiKey, Accept: 'application/atom+xml' },
    Body: 'MultipartFormData',
    FileFormName: 'upload',
    URL: '{regex:title="download_link" href="([^"]+)"|1}',
    DeletionURL: '{regex:title="delete_link" href="([^"]+)"|1}',
    ErrorMessage: '{regex:<content type="text">([^<]*)</content>|1}',
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** A word in single quotes for sh: nothing inside is expanded. */
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * A POSIX shell script over curl: uploads the files it is given (or standard input with
 * `-`, for Flameshot) and prints each download link, copying the last one to the
 * clipboard when a clipboard tool is there. Only curl and sed are needed.
 */
export function curlScript(baseUrl: string, apiKey: string, login: string): string {
  return `#!/bin/sh
# filehaven uploader for ${login.replace(/[^\x20-\x7e]/g, '?')} at ${hostOf(baseUrl)}: uploads files, prints their download links.
#   filehaven-upload.sh FILE...                   upload files
#   flameshot gui --raw | filehaven-upload.sh -   upload a screenshot (from standard input)
# The last link goes to the clipboard (wl-copy, xclip, xsel or pbcopy) unless
# FILEHAVEN_CLIPBOARD=no. This file holds your API key: keep it private (chmod 700).
# Regenerating the key on the profile page stops it; download it again then.
set -u
FILEHAVEN_URL=${shellQuote(baseUrl)}
FILEHAVEN_KEY=${shellQuote(apiKey)}

copy() {
  [ "\${FILEHAVEN_CLIPBOARD:-yes}" = no ] && return 0
  if command -v wl-copy >/dev/null 2>&1; then printf '%s' "$1" | wl-copy 2>/dev/null
  elif command -v xclip >/dev/null 2>&1; then printf '%s' "$1" | xclip -selection clipboard 2>/dev/null
  elif command -v xsel >/dev/null 2>&1; then printf '%s' "$1" | xsel --clipboard --input 2>/dev/null
  elif command -v pbcopy >/dev/null 2>&1; then printf '%s' "$1" | pbcopy 2>/dev/null
  fi
  return 0
}

# $1: curl's -F value for the part named "upload" (API.md 2).
upload() {
  answer=$(curl -sS -H "Authorization: $FILEHAVEN_KEY" -H 'Accept: application/atom+xml' -F "$1" "$FILEHAVEN_URL/files") || return 1
  link=$(printf '%s\\n' "$answer" | sed -n 's/.*title="download_link" href="\\([^"]*\\)".*/\\1/p' | head -n 1)
  if [ -z "$link" ]; then
    reason=$(printf '%s\\n' "$answer" | sed -n 's/.*<content type="text">\\(.*\\)<\\/content>.*/\\1/p' | head -n 1)
    echo "upload failed: \${reason:-no answer from $FILEHAVEN_URL}" >&2
    return 1
  fi
  printf '%s\\n' "$link"
  last=$link
}

if [ $# -eq 0 ]; then
  echo "usage: $0 FILE... (or - for standard input)" >&2
  exit 2
fi
status=0
last=
for file in "$@"; do
  if [ "$file" = - ]; then
    upload "upload=@-;filename=screenshot-$(date +%Y%m%d-%H%M%S).png" || status=1
  elif [ -f "$file" ]; then
    # curl's -F reads ; and , as separators unless the name is quoted (\\ and " escaped).
    quoted=$(printf '%s' "$file" | sed 's/[\\\\"]/\\\\&/g')
    upload "upload=@\\"$quoted\\"" || status=1
  else
    echo "not a file: $file" >&2
    status=1
  fi
done
[ -n "$last" ] && copy "$last"
exit $status
`;
}

/** The profile's "Uploaders" card: what each file is for, and that it holds the key. */
export function uploadersCard(): Html {
  return html`<section class="card" id="uploaders">
<h2>Uploaders</h2>
<p>Ready-made configurations for screenshot and upload tools, with your API key filled in. Keep them private; after you regenerate the key, download them again.</p>
<ul class="uploader-list">
<li><a class="button secondary" href="${SHAREX_PATH}" download>ShareX (.sxcu)</a> <span class="meta">Open the file: ShareX adds filehaven as its custom uploader for images, text and files.</span></li>
<li><a class="button secondary" href="${SCRIPT_PATH}" download>curl script (.sh)</a> <span class="meta">For Linux and macOS: <code>filehaven-upload.sh FILE…</code> prints the links; with Flameshot, <code>flameshot gui --raw | filehaven-upload.sh -</code>.</span></li>
</ul>
</section>`;
}

/** The uploader downloads: signed in only, never stored by a cache (they hold the key). */
export function registerUploaderConfigs(app: FastifyInstance, context: Context): void {
  const { services, links } = context;
  const send = (reply: FastifyReply, type: string, fileName: string, body: string) =>
    reply
      .headers({
        'Content-Type': type,
        'Content-Disposition': contentDisposition(fileName),
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "default-src 'none'; sandbox",
      })
      .send(body);

  app.get(SHAREX_PATH, { config: { web: true } }, async (request, reply) => {
    const session = request.webSession;
    if (!session) return redirectTo(reply, signInUrl(request.url));
    const key = await services.accounts.apiKeyFor(session.account);
    return send(
      reply,
      'application/json; charset=utf-8',
      `filehaven ${hostOf(links.baseUrl).replace(/[^A-Za-z0-9.-]/g, '-')}.sxcu`,
      sharexConfig(links.baseUrl, key),
    );
  });

  app.get(SCRIPT_PATH, { config: { web: true } }, async (request, reply) => {
    const session = request.webSession;
    if (!session) return redirectTo(reply, signInUrl(request.url));
    const key = await services.accounts.apiKeyFor(session.account);
    return send(reply, 'text/x-shellscript; charset=utf-8', 'filehaven-upload.sh', curlScript(links.baseUrl, key, session.account.login));
  });
}
