import type { Services } from '../../composition.js';
import { type Account, premiumState } from '../../domain/types.js';
import { UPLOAD_WINDOW_MS } from '../../limits/upload-quota.js';
import { type Html, html } from '../html.js';
import { humanSize } from './format.js';

/** What an account has used and may still use, for the home page and the profile. */
export interface Usage {
  /** Bytes uploaded in the rolling window (0 when unlimited: nothing is counted then). */
  uploaded: number;
  /** The window's limit, null when unlimited. */
  uploadLimit: number | null;
  /** What is left of it, null when unlimited. */
  uploadLeft: number | null;
  /** Hours of the rolling window (24). */
  windowHours: number;
  /** Largest file the server takes. */
  maxFileSize: number;
  /** Premium traffic left for direct downloads. */
  trafficLeft: number;
  /** Whether premium is active now. */
  premium: boolean;
  /** Free downloads' speed cap (bytes/s), null when uncapped. */
  freeSpeed: number | null;
}

/** Reads the account's usage through the services that enforce the limits. */
export async function usageOf(services: Pick<Services, 'limits' | 'config' | 'clock'>, account: Account): Promise<Usage> {
  // The figures the upload limit itself works with (stored uploads and those in flight).
  const volume = await services.limits.uploads.usage(account);
  return {
    uploaded: volume.used,
    uploadLimit: volume.limit,
    uploadLeft: volume.limit === null ? null : Math.max(0, volume.limit - volume.used),
    windowHours: Math.round(UPLOAD_WINDOW_MS / 3_600_000),
    maxFileSize: services.config.maxFileSize,
    trafficLeft: account.trafficLeft,
    premium: premiumState(account, services.clock()) === 'Active',
    freeSpeed: services.config.freeDownloadSpeed,
  };
}

/** The upload volume as a bar and numbers in human sizes: "1.2 GiB of 50.0 GiB used · 48.8 GiB left". */
export function uploadVolumeBlock(usage: Usage): Html {
  if (usage.uploadLimit === null) {
    return html`<p class="bar-label"><span>Upload volume</span><strong>unlimited</strong></p>
<p class="hint">No upload volume limit on this account.</p>`;
  }
  return html`<p class="bar-label"><span>Upload volume, last ${usage.windowHours} h</span><strong>${humanSize(usage.uploadLeft ?? 0)} left</strong></p>
<meter class="bar" min="0" max="${usage.uploadLimit}" low="${Math.floor(usage.uploadLimit * 0.8)}" high="${Math.floor(usage.uploadLimit * 0.95)}" optimum="0" value="${usage.uploaded}" aria-label="Upload volume used">${humanSize(usage.uploaded)} used</meter>
<p class="scale"><span>${humanSize(usage.uploaded)} used</span><span>${humanSize(usage.uploadLimit)}</span></p>`;
}

/** The profile's "Usage and limits" card: upload volume, largest file, download speed (traffic is in the premium card). */
export function usageCard(usage: Usage, id = 'usage'): Html {
  return html`<section class="card" id="${id}">
<h2>Usage and limits</h2>
${uploadVolumeBlock(usage)}
<dl class="facts usage-facts">
<dt>Largest file</dt><dd>${humanSize(usage.maxFileSize)}</dd>
<dt>Free downloads</dt><dd>${usage.freeSpeed === null ? 'no speed cap' : html`up to ${humanSize(usage.freeSpeed)}/s each`}</dd>
</dl>
</section>`;
}
