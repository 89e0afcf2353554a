import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ResumableUploadRecord } from '../../db/repositories/repositories.js';
import { apiKeyOf } from '../plugins/api-auth.js';
import { callerOf, requestCallerOf, type TusCaller } from './tus-caller.js';
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
  const { service } = endpoint.context.services.resumable;
  // An upload into an upload request is reached without an API key through its request
  // (its password or link cookie), and only it: the caller gets the uploads bound to that
  // request (by their unguessable ids), never another upload of the owner.
  const requestId = apiKeyOf(request) === undefined ? await service.requestOf(id) : null;
  const caller = requestId === null ? await callerOf(endpoint.context, request) : await requestCallerOf(endpoint.context, request, requestId);
  return { caller, record: await service.owned(caller.account, id) };
}
