import type { CallOptions } from './api-connection.js';

/*
 * The form fields of the sharing calls (issue 25): shares, upload requests and file
 * expiry. Values go to the server as given, so it answers errorWrongParameters for one
 * it refuses (a negative limit, an expiry past the site's cap) with its own words; only
 * what cannot be a form value at all (NaN, Infinity) is refused here.
 */

/** What a new share may carry. */
export interface ShareOptions extends CallOptions {
  /** Seconds until it stops working (at least 1); absent: never, unless the site caps it. */
  expiresIn?: number;
  /** A password people must give; absent: none (unless the site requires one). */
  password?: string;
  /** Downloads allowed in all (at least 1); absent: unlimited. */
  maxDownloads?: number;
  /** Serve it uncapped on your premium traffic (falls back to the free rules when it runs out). */
  fast?: boolean;
}

/** A change of a share; what is left out stays (the count so far always does). */
export interface ShareChanges extends CallOptions {
  /** Seconds from now; null: never. */
  expiresIn?: number | null;
  /** The new password; null or '': none. */
  password?: string | null;
  /** Downloads allowed in all, counted ones included; null: unlimited. */
  maxDownloads?: number | null;
  fast?: boolean;
}

/** What a new upload request may carry. */
export interface UploadRequestOptions extends CallOptions {
  /** The folder of yours the files land in; absent: the top of the account. */
  folder?: string;
  /** A title shown to uploaders. */
  title?: string;
  /** A message shown to uploaders. */
  message?: string;
  /** Seconds until it stops taking files (at least 1); absent: never, unless the site caps it. */
  expiresIn?: number;
  /** A password uploaders must give. */
  password?: string;
  /** Files it takes in all. */
  maxFiles?: number;
  /** Bytes it takes, all files together. */
  maxBytes?: number;
  /** The largest file it takes, in bytes. */
  maxFileSize?: number;
}

/** A change of an upload request; what is left out stays. null: no limit (or no password, or never). */
export interface UploadRequestChanges extends CallOptions {
  title?: string;
  message?: string;
  expiresIn?: number | null;
  password?: string | null;
  maxFiles?: number | null;
  maxBytes?: number | null;
  maxFileSize?: number | null;
}

/** A number as a form value; a value that is no number at all is the caller's mistake. */
function numberField(name: string, value: number): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError(`${name} must be a number, got ${String(value)}`);
  return String(value);
}

/** Sets the fields that were given: numbers as text, null as `0` (never, unlimited) or '' (no password), booleans as 1 and 0. */
function fill(form: URLSearchParams, fields: Record<string, string | number | boolean | null | undefined>, nullAs: Record<string, string>): URLSearchParams {
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (value === null) form.set(name, nullAs[name] ?? '0');
    else if (typeof value === 'boolean') form.set(name, value ? '1' : '0');
    else if (typeof value === 'number') form.set(name, numberField(name, value));
    else form.set(name, value);
  }
  return form;
}

/** POST /shares: `file` or `folder`, then the options. */
export function shareForm(target: { file: string } | { folder: string }, options: ShareOptions, ref: (id: string, what: string) => string): URLSearchParams {
  const form = new URLSearchParams();
  if ('file' in target) form.set('file', ref(target.file, 'file id'));
  else form.set('folder', ref(target.folder, 'folder id'));
  // `fast` only when asked: an absent field leaves the server's default.
  return fill(
    form,
    { expires_in: options.expiresIn, password: options.password, max_downloads: options.maxDownloads, fast: options.fast ? true : undefined },
    {},
  );
}

/** PUT /shares/<id>. */
export function shareChangeForm(changes: ShareChanges): URLSearchParams {
  return fill(
    new URLSearchParams(),
    { expires_in: changes.expiresIn, password: changes.password, max_downloads: changes.maxDownloads, fast: changes.fast },
    { password: '' },
  );
}

/** POST /requests. */
export function requestForm(options: UploadRequestOptions, ref: (id: string, what: string) => string): URLSearchParams {
  const form = new URLSearchParams();
  if (options.folder !== undefined) form.set('folder', ref(options.folder, 'folder id'));
  return fill(
    form,
    {
      title: options.title,
      message: options.message,
      expires_in: options.expiresIn,
      password: options.password,
      max_files: options.maxFiles,
      max_bytes: options.maxBytes,
      max_file_size: options.maxFileSize,
    },
    {},
  );
}

/** PUT /requests/<id>. */
export function requestChangeForm(changes: UploadRequestChanges): URLSearchParams {
  return fill(
    new URLSearchParams(),
    {
      title: changes.title,
      message: changes.message,
      expires_in: changes.expiresIn,
      password: changes.password,
      max_files: changes.maxFiles,
      max_bytes: changes.maxBytes,
      max_file_size: changes.maxFileSize,
    },
    { password: '' },
  );
}

/** PUT /files/<id>;expiry: seconds from now, or null for never (`0`). */
export function expiryForm(expiresIn: number | null): URLSearchParams {
  return fill(new URLSearchParams(), { expires_in: expiresIn }, {});
}
