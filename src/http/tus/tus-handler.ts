import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ResumableUploadRecord } from '../../db/repositories/repositories.js';
import { callerOf, type TusCaller } from './tus-caller.js';
import type { TusEndpoint } from './tus-endpoint.js';

/**
 * One tus request handler per method, as tus-node-server writes them
 * (packages/server/src/handlers/*Handler.ts). `id` is the upload of the path, already
 * checked to be one a server could have made; undefined on the collection.
 */
export type TusHandler = (endpoint: TusEndpoint, request: FastifyRequest, reply: FastifyReply, id: string | undefined) => Promise<FastifyReply>;

/** The handler of an upload's own URL: `id` is always there. */
export type TusItemHandler = (endpoint: TusEndpoint, request: FastifyRequest, reply: FastifyReply, id: string) => Promise<FastifyReply>;

/**
 * The caller and their upload `id`: errorFileNotFound when there is none (or it expired),
 * errorPermissionDenied when it is another account's.
 */
export async function callersUpload(endpoint: TusEndpoint, request: FastifyRequest, id: string): Promise<{ caller: TusCaller; record: ResumableUploadRecord }> {
  const caller = await callerOf(endpoint.context, request);
  return { caller, record: await endpoint.context.services.resumable.service.owned(caller.account, id) };
}
