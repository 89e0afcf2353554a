// Words for the upload on My files: sizes, durations, readable links, and why an upload
// failed (a refusal before sending, the server's Atom error or HTTP status, a lost
// connection) as a sentence for people. No DOM here: my-files.js, loaded after this,
// puts the words on the page as text. The server says the same of its form's refusals
// in upload-messages.ts.

window.FilehavenUploadText = (() => {
  /** Units as the server prints them (format.ts): 1023 B, 1.0 KiB, 48.2 MiB. */
  function humanSize(bytes) {
    if (bytes < 1024) return `${bytes} B`;
    const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let value = bytes;
    let unit = -1;
    do {
      value /= 1024;
      unit++;
    } while (value >= 1024 && unit < units.length - 1);
    return `${value.toFixed(1)} ${units[unit]}`;
  }

  /** 45 s, 3 min 20 s, 2 h 5 min. */
  function humanDuration(seconds) {
    const s = Math.max(1, Math.round(seconds));
    if (s < 60) return `${s} s`;
    const minutes = Math.floor(s / 60);
    if (minutes < 10 && s % 60 !== 0) return `${minutes} min ${s % 60} s`;
    if (minutes < 60) return `${minutes} min`;
    return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  }

  /** A link as people read it: the path's escapes decoded (format.ts readableUrl); the href stays encoded. */
  function readableUrl(link) {
    try {
      const url = new URL(link, location.href);
      const path = url.pathname
        .split('/')
        .map((segment) => {
          try {
            return decodeURIComponent(segment);
          } catch {
            return segment;
          }
        })
        .join('/');
      return `${url.origin}${path}${url.search}`;
    } catch {
      return link;
    }
  }

  /**
   * Why a file is refused before any of it is sent, or null when it may go. `limits` is
   * what the page knows (#upload-limits): the largest file, and the upload volume left
   * (null = unlimited) less what this page is sending already (`pending`).
   */
  function refusal(file, limits, pending) {
    if (file.size === 0) return 'This file is empty (0 B): there is nothing to upload.';
    if (limits.maxFileSize !== null && file.size > limits.maxFileSize) {
      return `This file is ${humanSize(file.size)}, larger than the limit of ${humanSize(limits.maxFileSize)} per file. Nothing was sent.`;
    }
    if (limits.volumeLeft !== null && file.size > limits.volumeLeft - pending) {
      const left = Math.max(0, limits.volumeLeft - pending);
      return left === 0
        ? `Your upload volume for the last 24 hours is used up (${humanSize(limits.volumeLimit ?? 0)} per 24 hours). Nothing was sent.`
        : `This file is ${humanSize(file.size)}, but only ${humanSize(left)} of your upload volume is left for now (${humanSize(limits.volumeLimit ?? 0)} per 24 hours). Nothing was sent.`;
    }
    return null;
  }

  /**
   * A failed request in words. `problem`: { status (0 when no answer came), code (the Atom
   * error's title or the form's JSON code, if any), message (the server's), retryAfter
   * (seconds, or null) }; `limits` as in refusal(), for the size limit.
   */
  function explain(problem, limits) {
    const { status, code, message, retryAfter } = problem;
    const wait = retryAfter ? ` You can try again in about ${humanDuration(retryAfter)}.` : '';
    if (status === 0) {
      return navigator.onLine === false
        ? 'You are offline: the upload stopped. Connect again, then press Retry.'
        : 'The connection to the server was lost. Press Retry to try again.';
    }
    if (code === 'errorFileSize' || (!code && status === 413)) {
      // The API's message names the limit in bytes (API.md 3): say it in human units.
      const limit = Number(/limit of (\d+) bytes/.exec(message ?? '')?.[1] ?? limits.maxFileSize ?? NaN);
      return Number.isFinite(limit)
        ? `This file is larger than the limit of ${humanSize(limit)} per file. Nothing of it was kept.`
        : 'This file is larger than the server accepts. Nothing of it was kept.';
    }
    if (code === 'errorUploadLimit')
      return `Your upload volume for the last 24 hours is used up.${wait || ' You can upload again once older uploads leave the 24-hour window.'}`;
    if (code === 'errorRateLimited' || status === 429)
      return `The server is busy with too many requests from you.${wait || ' Please wait a moment, then press Retry.'}`;
    if (code === 'errorEmptyFile') return 'This file is empty (0 B): there is nothing to upload.';
    if (code === 'errorFileInBlackList') return 'This file is not allowed on this site (its content or its name is on the blacklist).';
    if (code === 'errorFolderNotFound') return 'The folder you are uploading into no longer exists. Reload the page.';
    if (status === 401) return 'You are signed out. Sign in again, then choose the file again.';
    if (code === 'errorUploadFaild' && status < 500) return 'The file did not arrive whole (the upload was cut off). Please try again.';
    if (status >= 500) return 'The server could not take the file (a problem on its side). Please press Retry in a moment.';
    return message || `The server refused the upload (HTTP ${status}).`;
  }

  /** Whether trying the same request again may help: no answer, a busy or failing server, a conflict or a lock. */
  function retryable(status) {
    return status === 0 || status === 408 || status === 409 || status === 423 || status === 429 || status >= 500;
  }

  return { humanSize, humanDuration, readableUrl, refusal, explain, retryable };
})();
