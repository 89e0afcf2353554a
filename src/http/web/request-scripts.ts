import type { FastifyInstance } from 'fastify';
import { html } from '../html.js';
import { browserScript, registerStaticScript } from './browser-scripts.js';
import { TUS_CLIENT_PATH } from './tus-client-script.js';

/** The upload request page's script, bundled from browser/request-upload.ts (browser-scripts.ts). */
export const REQUEST_UPLOAD_SCRIPT = browserScript('request-upload');

/** tus-js-client first (the global the bundle uses), both from the site itself. */
export const REQUEST_SCRIPTS = html`<script src="${TUS_CLIENT_PATH}" defer></script>
<script src="${REQUEST_UPLOAD_SCRIPT.path}" defer></script>`;

/** Serves the request page's script (tus-js-client is served already, by My files' registration: upload-form.ts). */
export function registerRequestScripts(app: FastifyInstance): void {
  registerStaticScript(app, REQUEST_UPLOAD_SCRIPT);
}
