import type { FastifyInstance } from 'fastify';
import type { Config } from '../../../config/config.js';
import type { HttpContext } from '../../context.js';
import { html } from '../../html.js';
import { humanSize } from '../format.js';
import { CONSOLE_PATH, queryText, sendConsolePage } from './console-page.js';
import { svgChart } from './svg-chart.js';

/** The services this module calls. */
type Context = HttpContext<'config' | 'gc' | 'operator'>;

const SETTINGS_PATH = `${CONSOLE_PATH}/settings`;
/** The history lengths the overview offers. */
const RANGES = [7, 30, 90] as const;

const count = (n: number) => n.toLocaleString('en');
const orUnlimited = (bytes: number | null) => (bytes === null ? 'unlimited' : humanSize(bytes));
const perMinute = (n: number) => (n === 0 ? 'unlimited' : `${n} a minute`);
const duration = (ms: number) =>
  ms % 86_400_000 === 0 && ms >= 86_400_000
    ? `${ms / 86_400_000} d`
    : ms % 3_600_000 === 0
      ? `${ms / 3_600_000} h`
      : ms % 60_000 === 0
        ? `${ms / 60_000} min`
        : `${ms / 1000} s`;

/** The limits and settings the console shows, with the flag that sets each. Secrets never appear. */
function settingsRows(config: Config): [string, string, string][] {
  return [
    ['Largest file', humanSize(config.maxFileSize), '--max-file-size'],
    ['Upload volume per 24 h, free', orUnlimited(config.uploadVolumeFree), '--upload-volume-free'],
    ['Upload volume per 24 h, premium', orUnlimited(config.uploadVolumePremium), '--upload-volume-premium'],
    ['Free download speed', config.freeDownloadSpeed === null ? 'unlimited' : `${humanSize(config.freeDownloadSpeed)}/s`, '--free-download-speed'],
    ['Concurrent free downloads per address', config.freeDownloadsPerIp === 0 ? 'unlimited' : String(config.freeDownloadsPerIp), '--free-downloads-per-ip'],
    ['Failed sign-ins per address and login', perMinute(config.loginAttemptsPerMinute), '--login-attempts'],
    ['API requests per key', perMinute(config.apiRatePerKey), '--api-rate-per-key'],
    ['API requests per address', perMinute(config.apiRatePerIp), '--api-rate-per-ip'],
    ['Connections per address', config.maxConnectionsPerIp === 0 ? 'unlimited' : String(config.maxConnectionsPerIp), '--max-connections-per-ip'],
    ['Direct link lifetime', duration(config.directLinkTtlMs), '--direct-link-ttl'],
    ['Direct links need the API key', config.directLinkRequiresKey ? 'yes' : 'no', '--direct-link-requires-key'],
    ['Sign-up', config.signup, '--signup'],
    [
      'Second factor required for',
      { none: 'nobody', operators: 'operators', everyone: 'every account' }[config.secondFactorRequired],
      '--second-factor-required',
    ],
    ['Housekeeping (gc) every', config.gcIntervalMs === 0 ? 'never' : duration(config.gcIntervalMs), '--gc-interval'],
    ['Password on every share and upload request', config.sharePasswordRequired ? 'required' : 'optional', '--share-password-required'],
    [
      'Longest share or upload request',
      config.shareMaxExpiryMs === null ? 'no limit (never expiring allowed)' : duration(config.shareMaxExpiryMs),
      '--share-max-expiry',
    ],
    ['File expiry by default', config.fileExpiryDefaultMs === null ? 'never' : duration(config.fileExpiryDefaultMs), '--file-expiry-default'],
    ['Longest file expiry', config.fileExpiryMaxMs === null ? 'no limit' : duration(config.fileExpiryMaxMs), '--file-expiry-max'],
    ['Upload requests', config.uploadRequests ? 'on' : 'off', '--upload-requests'],
    ['Expire files not downloaded for', config.expireAfterDays === 0 ? 'off' : `${config.expireAfterDays} days`, '--expire-after-days'],
    ['Resumable upload expiry', duration(config.uploadExpiryMs), '--upload-expiry'],
    ['Metadata', config.databaseUrl === null ? 'SQLite in the data folder' : `PostgreSQL, schema ${config.databaseSchema}`, '--database-url'],
    ['File contents', config.s3Bucket === null ? 'the data folder' : `S3 bucket ${config.s3Bucket}`, '--s3-bucket'],
    ['Shared limits', config.redisUrl === null ? 'each server counts alone' : 'Redis', '--redis-url'],
  ];
}

/** The overview (totals and charts) and the read-only settings page. */
export function registerConsoleOverview(app: FastifyInstance, context: Context): void {
  const { services } = context;

  app.get(CONSOLE_PATH, { config: { web: true } }, async (request, reply) => {
    const asked = Number(queryText(request.query, 'days'));
    const days = (RANGES as readonly number[]).includes(asked) ? asked : 30;
    const [stats, history] = await Promise.all([services.gc.stats(), services.operator.history.days(days)]);
    const labels = history.map((d) => new Date(d.day).toISOString().slice(0, 10));
    const fact = (label: string, value: string) => html`<div class="stat"><dt>${label}</dt><dd>${value}</dd></div>`;
    const ranges = RANGES.map((n) =>
      n === days ? html`<span class="badge ok" aria-current="true">${n} days</span>` : html`<a class="badge" href="${CONSOLE_PATH}?days=${n}">${n} days</a>`,
    );
    return sendConsolePage(
      reply,
      200,
      CONSOLE_PATH,
      'Overview',
      html`<section class="card">
<h1>Overview</h1>
<dl class="stats">
${fact('Accounts', count(stats.accounts))}
${fact('Active files', `${count(stats.files.active.count)} · ${humanSize(stats.files.active.bytes)}`)}
${fact('Blocked files', `${count(stats.files.blocked.count)} · ${humanSize(stats.files.blocked.bytes)}`)}
${fact('Stored', `${count(stats.stored.blobs)} contents · ${humanSize(stats.stored.bytes)}`)}
${fact('Saved by de-duplication', humanSize(stats.dedupSavedBytes))}
${fact('Downloads', count(stats.downloads))}
${fact('Bytes served', humanSize(stats.bytesServed))}
${fact('Expiry', stats.expiry ? `${count(stats.expiry.wouldExpire)} files due (after ${stats.expiry.afterDays} days)` : 'off')}
</dl>
</section>
<section class="card">
<h2>The last ${days} days</h2>
<p class="range-row">${ranges}</p>
${svgChart({ title: 'Uploads per day', kind: 'bars', labels, format: count, series: [{ name: 'Uploads', className: 'series-uploads', values: history.map((d) => d.uploads) }] })}
${svgChart({ title: 'Bytes uploaded per day', kind: 'bars', labels, format: humanSize, series: [{ name: 'Uploaded', className: 'series-uploaded', values: history.map((d) => d.uploadedBytes) }] })}
${svgChart({
  title: 'Bytes of live files and bytes stored, at the end of each day',
  kind: 'lines',
  labels,
  format: humanSize,
  series: [
    { name: 'Live files', className: 'series-files', values: history.map((d) => d.fileBytes) },
    { name: 'Stored (distinct contents)', className: 'series-stored', values: history.map((d) => d.storedBytes) },
  ],
})}
${svgChart({ title: 'Saved by de-duplication', kind: 'lines', labels, format: humanSize, series: [{ name: 'Saved', className: 'series-saved', values: history.map((d) => d.savedBytes) }] })}
${svgChart({ title: 'Bytes served per day', kind: 'bars', labels, format: humanSize, series: [{ name: 'Served', className: 'series-served', values: history.map((d) => d.servedBytes) }] })}
<p class="meta">Uploads and live bytes are drawn from the files table: each file's upload and deletion times. Bytes served are counted per UTC day as downloads finish, from the upgrade that added the count (earlier days show 0).</p>
</section>`,
    );
  });

  app.get(SETTINGS_PATH, { config: { web: true } }, async (_request, reply) => {
    const rows = settingsRows(services.config).map(([label, value, flag]) => html`<tr><td>${label}</td><td>${value}</td><td><code>${flag}</code></td></tr>`);
    return sendConsolePage(
      reply,
      200,
      SETTINGS_PATH,
      'Settings',
      html`<section class="card">
<h1>Limits and settings</h1>
<p class="notice">Read only. Each server reads these once, at its start, from its flags, environment and config file, and several servers of a site must agree on them, so none can safely change while the site runs. Change the flag (or <code>FILEHAVEN_*</code> variable, or config key) and restart each server.</p>
<div class="table-scroll"><table class="console-table">
<thead><tr><th>Setting</th><th>Value</th><th>Flag</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>
</section>`,
    );
  });
}
