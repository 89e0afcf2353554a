import { lookup } from 'mime-types';

/**
 * Inline previews of the download page. Uploaded content must never run on the site's
 * origin, so a preview exists only for types a browser shows without running anything
 * of the file's: raster images, audio, video, text (always as text/plain) and PDF.
 * The type is decided from the stored file name's extension (mime-types), never sniffed;
 * HTML, SVG, XML, scripts and everything else are downloads only.
 */
export type PreviewKind = 'image' | 'audio' | 'video' | 'text' | 'pdf';

export interface Preview {
  kind: PreviewKind;
  /** The exact Content-Type the preview URL answers with. */
  contentType: string;
  /** Largest file the page embeds (the preview URL itself serves any size, with Range). */
  maxEmbedBytes: number;
}

const MiB = 1024 * 1024;
const UNLIMITED = Number.MAX_SAFE_INTEGER;

/** Media type (as mime-types names it) → preview kind. Nothing else is previewed. */
const ALLOWED: ReadonlyMap<string, PreviewKind> = new Map<string, PreviewKind>([
  // Raster images only: SVG is a document that can carry script.
  ['image/png', 'image'],
  ['image/jpeg', 'image'],
  ['image/gif', 'image'],
  ['image/webp', 'image'],
  ['image/avif', 'image'],
  ['image/bmp', 'image'],
  ['audio/mpeg', 'audio'],
  ['audio/ogg', 'audio'],
  ['audio/wav', 'audio'],
  ['audio/mp4', 'audio'],
  ['audio/aac', 'audio'],
  ['audio/webm', 'audio'],
  ['audio/flac', 'audio'],
  ['audio/x-flac', 'audio'],
  ['video/mp4', 'video'],
  ['video/webm', 'video'],
  ['video/ogg', 'video'],
  // Text-like files are shown as plain text, whatever their own type would do.
  ['text/plain', 'text'],
  ['text/markdown', 'text'],
  ['text/csv', 'text'],
  ['text/tab-separated-values', 'text'],
  ['text/yaml', 'text'],
  ['application/json', 'text'],
  ['application/pdf', 'pdf'],
]);

/** The one Content-Type of every text preview. */
export const TEXT_PREVIEW_TYPE = 'text/plain; charset=utf-8';

/**
 * Embedding limits: a text frame and an image are loaded whole by the browser, so big
 * ones are left to the download button; media and PDF viewers fetch ranges as needed.
 */
const MAX_EMBED: Record<PreviewKind, number> = { image: 25 * MiB, text: 1 * MiB, audio: UNLIMITED, video: UNLIMITED, pdf: UNLIMITED };

/** The preview of a file name, or null when its type is not on the allowlist. */
export function previewOf(name: string): Preview | null {
  const type = lookup(name);
  if (type === false) return null;
  const kind = ALLOWED.get(type);
  if (!kind) return null;
  return { kind, contentType: kind === 'text' ? TEXT_PREVIEW_TYPE : type, maxEmbedBytes: MAX_EMBED[kind] };
}

/**
 * The Content-Security-Policy of a preview response. `sandbox` (no script, no forms, no
 * plugins, no navigation of the page) holds even when the preview URL is opened on its
 * own, and gives the document an opaque origin; `default-src 'none'` lets it load
 * nothing, except that an image or media document opened on its own must load itself.
 * Media documents keep the origin (`allow-same-origin`, never with `allow-scripts`):
 * Chromium's player in an opaque-origin document refuses its own URL as cross-origin.
 * Only the site may frame a preview.
 */
export function previewCsp(kind: PreviewKind): string {
  const media = kind === 'audio' || kind === 'video';
  const self = kind === 'image' ? " img-src 'self';" : media ? " media-src 'self';" : '';
  const sandbox = media ? 'sandbox allow-same-origin' : 'sandbox';
  return `${sandbox}; default-src 'none';${self} frame-ancestors 'self'`;
}

/** What the download page's own CSP must add for its preview element: exactly one source, 'self'. */
export function pageCspAddition(kind: PreviewKind): string {
  // img-src 'self' is in every page's policy already.
  if (kind === 'audio' || kind === 'video') return "media-src 'self'";
  if (kind === 'text' || kind === 'pdf') return "frame-src 'self'";
  return '';
}
