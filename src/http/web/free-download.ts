import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FileRecord } from '../../domain/types.js';
import type { HttpContext } from '../context.js';
import { sendFile, whenResponseGone } from '../send-blob.js';

/**
 * The rules of a free download (API.md 8), in one place for every response that sends
 * files to anyone (a file, its inline preview, a folder's ZIP): a few at once per client
 * address, the slot given back when the response is over however it ends; each body at
 * the free speed cap; the download metered; each file's download start and the bytes it
 * sent counted as served.
 */
export interface FreeDownload {
  /** The bytes at the free speed cap. */
  throttle(source: Readable): Readable;
  /** A download of this file started (counted once per download, not per resumed range: expiry reads it). */
  countStart(fileId: string): Promise<void>;
  /** The body starts: the download is metered from here. */
  begin(): void;
  /**
   * The body is over (called once; later calls do nothing): `sent` body bytes reached the
   * client, `perFile` of them were each file's own bytes.
   */
  end(sent: number, perFile: Array<{ fileId: string; bytes: number }>): void;
  /**
   * Runs `then` once when the response is over however it ends (at once when it is
   * already), after the slot is given back: through the one 'close' listener the free
   * download keeps on the response, so a route adds none of its own.
   */
  whenGone(then: () => void): void;
}

/**
 * Takes one of the client address's free-download slots (errorTooManyDownloads when none
 * is left), held until the response is over. Called before any costly work for the
 * response (a ZIP's plan), so that work is bounded by the slots too.
 */
export async function enterFreeDownload(context: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<FreeDownload> {
  const { services } = context;
  const leave = await services.limits.freeDownloads.enter(request.ip);
  let gone = false;
  const onGone: Array<() => void> = [];
  whenResponseGone(request, reply, () => {
    gone = true;
    leave();
    for (const then of onGone.splice(0)) then();
  });
  let metered: ((sent: number) => void) | undefined;
  let ended = false;
  return {
    throttle: (source) => services.limits.freeDownloads.throttle(source),
    countStart: (fileId) => services.files.recordDownload(fileId),
    begin: () => {
      metered ??= services.metrics.downloadStarted('public');
    },
    end: (sent, perFile) => {
      if (ended) return;
      ended = true;
      metered?.(sent);
      for (const { fileId, bytes } of perFile) {
        services.files.recordBytesServed(fileId, bytes).catch((error) => request.log.error(error, 'counting bytes served failed'));
      }
    },
    whenGone: (then) => {
      if (gone) then();
      else onGone.push(then);
    },
  };
}

/**
 * Sends a file to anyone (the raw free download and the inline preview) under the free
 * download rules (enterFreeDownload), with the HTTP semantics of sendFile.
 */
export async function sendFreeFile(
  context: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  file: FileRecord,
  options: { countsAsDownload: boolean; headers?: Record<string, string> },
): Promise<FastifyReply> {
  const { services } = context;
  const download = await enterFreeDownload(context, request, reply);
  return sendFile(request, reply, {
    file,
    open: async (range) => download.throttle(await services.downloads.open(file, range)),
    beforeBody: async () => {
      const start = !request.headers.range || request.headers.range.startsWith('bytes=0-');
      if (options.countsAsDownload && start) await download.countStart(file.id);
      // Last: afterBody, which ends the meter, runs only when beforeBody went through.
      download.begin();
    },
    afterBody: (sent) => download.end(sent, [{ fileId: file.id, bytes: sent }]),
    headers: options.headers,
  });
}
