import type { FastifyReply } from 'fastify';
import { ERROR_MEANINGS, type ErrorCode } from '../../domain/errors.js';
import { type FileRecord, FileStatus } from '../../domain/types.js';
import { ACCESS_LABELS, curlFor, ENDPOINTS, type Endpoint, errorCases } from '../api/api-catalogue.js';
import { createdFileEntry } from '../api/file-entries.js';
import { atomFeed, entryEl, rfc822, textEl } from '../atom.js';
import type { HttpContext } from '../context.js';
import { type Html, html } from '../html.js';
import { sendPage } from './layout.js';

/** The services this module calls. */
type Context = HttpContext<'config'>;

/** A fixed moment for the examples, so the page reads the same on every visit. */
const EXAMPLE_TIME = new Date(Date.UTC(2026, 10, 21, 10, 4, 5));

const SAMPLE_FILE: FileRecord = {
  id: 'K7Q2M9X4PA',
  ownerId: 1,
  folderId: null,
  name: 'report 2026.pdf',
  size: 48213,
  sha256: '0'.repeat(64),
  status: FileStatus.Active,
  createdAt: EXAMPLE_TIME.getTime(),
  downloads: 0,
  lastDownloadAt: null,
  expiresAt: null,
};

/** Example bodies, rendered by the serializer the API itself uses (src/http/atom.ts). */
function examples(context: Context): { upload: string; error: string } {
  const { links } = context;
  const feed = (title: string, path: string, entry: ReturnType<typeof entryEl>) =>
    atomFeed({
      title,
      id: `${links.baseUrl}${path}`,
      updated: EXAMPLE_TIME,
      author: links.webUrl,
      namespace: links.namespace,
      selfPath: path,
      entries: [entry],
    });
  return {
    upload: feed('File upload result', '/files', entryEl(...createdFileEntry(links, SAMPLE_FILE, '3f9c2b7d41e08a6c5b1f9e2d7a4c8e01', 'self'))),
    error: feed(
      'Error',
      '/files/ZZZZZZZZZZ',
      entryEl(textEl('title', 'errorFileNotFound'), { name: 'content', attrs: [['type', 'text']], text: 'File does not exist or is deleted' }),
    ),
  };
}

const code = (text: string) => html`<code>${text}</code>`;

/**
 * A path in <code> that may wrap only between its parts (after `/`, before `;`), never
 * inside a word: on a phone `/files/<id>;DirectLink` breaks as a path, not as "Direc|tLink".
 */
const pathCode = (path: string): Html => html`<code>${path.split(/(?<=\/)|(?=;)/).map((part, i) => html`${i > 0 ? html`<wbr>` : ''}${part}`)}</code>`;

/** Catalogue text (written for the markdown of docs/api.md too): `backticked` parts become <code>. */
const prose = (text: string): Html => html`${text.split('`').map((part, i) => (i % 2 === 1 ? code(part) : part))}`;

function endpointSection(endpoint: Endpoint, baseUrl: string): Html {
  const aliases =
    endpoint.aliases.length > 0 ? html`<p class="meta">Also: ${endpoint.aliases.map((alias, i) => html`${i > 0 ? ', ' : ''}<code>${alias}</code>`)}</p>` : '';
  const params =
    endpoint.params.length > 0
      ? html`<table class="params"><thead><tr><th>Parameter</th><th>In</th><th>Notes</th></tr></thead><tbody>${endpoint.params.map(
          (param) =>
            html`<tr><td><code>${param.name}</code>${param.required ? '' : html` <span class="badge">optional</span>`}</td><td>${param.in}</td><td>${prose(param.notes)}</td></tr>`,
        )}</tbody></table>`
      : '';
  return html`<section class="card reference endpoint" id="${endpoint.anchor}">
<h2><span class="method">${endpoint.method}</span> ${pathCode(endpoint.path)}${endpoint.inSpec ? '' : html` <span class="badge">extension</span>`}</h2>
${aliases}
<p>${prose(endpoint.summary)}</p>
<p class="meta">Auth: ${ACCESS_LABELS[endpoint.access]} · Success: ${endpoint.success.status}, feed title ${code(endpoint.success.title)}</p>
${params}
<p class="meta">Errors: ${endpoint.errors.map((error, i) => html`${i > 0 ? ', ' : ''}<a href="#${error}"><code>${error}</code></a>`)}</p>
<pre>${curlFor(endpoint, baseUrl)}</pre>
</section>`;
}

function errorTable(context: Context): Html {
  const cases = errorCases({ maxFileSize: context.services.config.maxFileSize });
  const byCode = new Map<ErrorCode, typeof cases>();
  for (const item of cases) byCode.set(item.error.code, [...(byCode.get(item.error.code) ?? []), item]);
  const rows = (Object.keys(ERROR_MEANINGS) as ErrorCode[]).map(
    (errorCode) =>
      html`<tr id="${errorCode}"><td><code>${errorCode}</code></td><td>${ERROR_MEANINGS[errorCode]}<ul class="cases">${(byCode.get(errorCode) ?? []).map(
        ({ error, when }) =>
          html`<li><span class="http-status">${error.status}</span> <q>${error.message}</q> <span class="meta">— ${when}${error.headers['Retry-After'] ? ', with Retry-After' : ''}${error.headers.Allow ? ', with Allow' : ''}</span></li>`,
      )}</ul></td></tr>`,
  );
  return html`<table class="errors"><thead><tr><th>Code</th><th>Meaning, HTTP status and message</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/**
 * {ed_namespace}: the API reference for client authors, generated from the endpoint
 * catalogue (src/http/api/api-catalogue.ts), the error catalogue (src/domain/errors.ts)
 * and the Atom serializer, with the server's real addresses.
 */
export function sendDevelopersPage(reply: FastifyReply, context: Context): FastifyReply {
  const { links } = context;
  const base = links.baseUrl;
  const example = examples(context);
  return sendPage(
    reply,
    200,
    'API reference',
    html`<section class="card reference">
<h1>API reference</h1>
<p>filehaven speaks a small REST API whose answers are Atom feeds. Clients written for it upload files, read file and account details, get premium direct links, copy files and move them into folders.</p>
<dl class="facts">
<dt>Base address</dt><dd><code>${base}</code></dd>
<dt>Public site</dt><dd><code>${links.webUrl}</code></dd>
<dt>Namespace of <code>ed:</code></dt><dd><code>${links.namespace}</code> (this page)</dd>
<dt>Authentication</dt><dd>the API key alone in the <code>Authorization</code> header, no scheme word</dd>
</dl>
<h2>Quick start</h2>
<pre>KEY=$(curl -s -d login=ada -d password='correct horse' ${base}/apikeys | sed -n 's:.*&lt;content type="text"&gt;\\(.*\\)&lt;/content&gt;.*:\\1:p')
curl -s -H "Authorization: $KEY" -F 'upload=@report 2026.pdf' ${base}/files</pre>
<p class="meta">Your key is also on your <a href="/accounts/profile/misc">profile page</a>.</p>
</section>

<section class="card reference" id="conventions">
<h2>Conventions</h2>
<ul class="notes">
<li>Every answer, error or not, is one Atom feed: <code>Content-Type: application/atom+xml; charset=utf-8</code>, whatever <code>Accept</code> says. Requests and answers are UTF-8.</li>
<li>Bodies of POST and PUT are form-encoded (<code>application/x-www-form-urlencoded</code>); an upload is <code>multipart/form-data</code>.</li>
<li>A client that cannot send PUT or DELETE sends POST with <code>_method=PUT</code> or <code>_method=DELETE</code> as a form field or query parameter. A <code>_method</code> on a GET is ignored.</li>
<li><code>;DirectLink</code> and <code>;files</code> work whether the semicolon arrives raw or encoded as <code>%3B</code>.</li>
<li>The format is fixed to the byte, for clients that read it line by line: the XML declaration first, two-space indentation, one element per line, attributes double-quoted in the order shown, the entry before the feed’s own <code>&lt;link rel="self"/&gt;</code>.</li>
<li><code>updated</code> is an RFC 822 date with a numeric zone: <code>${rfc822(EXAMPLE_TIME)}</code>. <code>id</code> is the absolute request URL, <code>author/name</code> the public site.</li>
<li>An unset value is an empty element written <code>&lt;x&gt;&lt;/x&gt;</code>, never self-closed. Premium dates are <code>YYYY-MM-DD HH:MM:SS</code> in UTC; <code>ed:status</code> is <code>A</code> (active) or <code>B</code> (blocked).</li>
</ul>
<h3>An upload result</h3>
<pre>${example.upload}</pre>
<h3>An error</h3>
<pre>${example.error}</pre>
</section>

<section class="card reference" id="endpoints">
<h2>Endpoints</h2>
<table class="endpoints"><thead><tr><th>Method</th><th>Path</th><th>Auth</th></tr></thead><tbody>
${ENDPOINTS.map((endpoint) => html`<tr><td>${endpoint.method}</td><td><a href="#${endpoint.anchor}">${pathCode(endpoint.path)}</a></td><td>${ACCESS_LABELS[endpoint.access]}</td></tr>`)}
</tbody></table>
<p class="meta">Endpoints marked <span class="badge">extension</span> are additions to the original API; the others behave as its existing clients expect.</p>
</section>

${ENDPOINTS.map((endpoint) => endpointSection(endpoint, base))}

<section class="card reference" id="errors">
<h2>Errors</h2>
<p>An error is the same feed with the title <code>Error</code>; the entry’s title is the code and its content the message. No answer ever carries a stack trace.</p>
${errorTable(context)}
</section>

<section class="card reference" id="links">
<h2>Public links</h2>
<table class="public-links"><thead><tr><th>Link</th><th>What a GET does</th></tr></thead><tbody>
<tr><td>${pathCode('/<id>/<name>')}</td><td>download_link: the download page; <code>?download=1</code> streams the bytes with Range, ETag, If-Range and HEAD; <code>?preview=1</code> shows images, audio, video, text and PDF inline</td></tr>
<tr><td>${pathCode('/direct/<id>/<token>/<name>')}</td><td>premium direct download; sends <code>Authorization</code> like the API (opened in a browser, the owner’s site session instead), counted against <code>ed:premium_trafficLeft</code></td></tr>
<tr><td>${pathCode('/<id>/delete/<secret>')}</td><td>delete_link: a confirm page; its POST deletes</td></tr>
<tr><td>${pathCode('/folder/<id>')}</td><td>folder_link: the folder’s active files and sub-folders</td></tr>
</tbody></table>
</section>`,
  );
}
