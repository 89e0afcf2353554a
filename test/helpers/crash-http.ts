import { createHash } from 'node:crypto';

/**
 * HTTP for the crash workload (test/helpers/crash-workload.ts): every call ends in one of
 * four outcomes, because a request in flight when the server is killed has no answer.
 */
export type Outcome =
  /** A whole answer: status and body. */
  | { kind: 'answer'; status: number; body: string }
  /** The connection was refused: the request never reached a server, so it did nothing. */
  | { kind: 'refused' }
  /** Sent (maybe partly), no whole answer: it may or may not have taken effect. */
  | { kind: 'unknown'; reason: string }
  /** No answer within the time limit from a server that was not killed meanwhile. */
  | { kind: 'timeout' };

const REQUEST_TIMEOUT_MS = 30_000;

/** The error code under fetch's "fetch failed" TypeError (ECONNREFUSED, UND_ERR_SOCKET, ...). */
export function errorCode(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function failure(error: unknown): Outcome {
  if ((error as Error)?.name === 'TimeoutError') return { kind: 'timeout' };
  const code = errorCode(error);
  return code === 'ECONNREFUSED' ? { kind: 'refused' } : { kind: 'unknown', reason: code };
}

/** fetch() with the body read as text; never throws. */
export async function request(url: string, init: RequestInit = {}, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Outcome> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    return { kind: 'answer', status: response.status, body: await response.text() };
  } catch (error) {
    return failure(error);
  }
}

/** A download: the status, the bytes that arrived (even when cut short), their SHA-256, and whether the body ended normally. */
export interface Download {
  outcome: Outcome;
  received: number;
  sha256: string;
  complete: boolean;
}

/**
 * Streams a GET, hashing and counting the body as it arrives; `onBytes` hears of every
 * chunk at once (traffic accounting compares what the client got with what it was
 * charged). An error status's body is kept as text in the outcome.
 */
export async function download(url: string, headers: Record<string, string> = {}, onBytes: (n: number) => void = () => {}): Promise<Download> {
  const hash = createHash('sha256');
  let received = 0;
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if (response.status !== 200 && response.status !== 206) {
      return { outcome: { kind: 'answer', status: response.status, body: await response.text() }, received: 0, sha256: '', complete: false };
    }
    const reader = response.body!.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        hash.update(value);
        received += value.length;
        onBytes(value.length);
      }
    } catch (error) {
      return { outcome: failure(error), received, sha256: '', complete: false };
    }
    return { outcome: { kind: 'answer', status: response.status, body: '' }, received, sha256: hash.digest('hex'), complete: true };
  } catch (error) {
    return { outcome: failure(error), received, sha256: '', complete: false };
  }
}

/** The code of an Atom error feed, or null. */
export function errorCodeOf(body: string): string | null {
  return /<title>Error<\/title>[\s\S]*?<entry>\s*<title>([^<]+)<\/title>/.exec(body)?.[1] ?? null;
}

/** The `<id>` of the first entry (upload, copy, folder answers). */
export function entryId(body: string): string | null {
  return /<entry>\s*<id>([^<]+)<\/id>/.exec(body)?.[1] ?? null;
}

const unescapeXml = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** One entry of a `File list` feed. */
export interface ListedFile {
  id: string;
  name: string;
  size: number;
  status: string;
  /** Folder id, or null at the top. */
  folder: string | null;
  downloadLink: string;
}

/** The entries of a `File list` page and its next link (a path), if any. */
export function parseFileList(body: string): { files: ListedFile[]; next: string | null } {
  const files: ListedFile[] = [];
  for (const [, entry] of body.matchAll(/<entry>([\s\S]*?)<\/entry>/g)) {
    const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(entry!)?.[1] ?? '';
    files.push({
      id: field('id'),
      name: unescapeXml(field('title')),
      size: Number(field('ed:size')),
      status: field('ed:status'),
      folder: field('ed:folder') || null,
      downloadLink: unescapeXml(/title="download_link" href="([^"]+)"/.exec(entry!)?.[1] ?? ''),
    });
  }
  const next = /<link rel="next" href="([^"]+)"/.exec(body)?.[1];
  return { files, next: next ? unescapeXml(next) : null };
}

/** The href of a `;DirectLink` answer's enclosure. */
export function enclosureHref(body: string): string | null {
  const href = /<link href="([^"]+)" rel="enclosure"/.exec(body)?.[1];
  return href ? unescapeXml(href) : null;
}

/** `premium_trafficLeft` of an `Account Info` answer. */
export function trafficLeftOf(body: string): number | null {
  const match = /<ed:premium_trafficLeft>(-?\d+)<\/ed:premium_trafficLeft>/.exec(body);
  return match ? Number(match[1]) : null;
}
