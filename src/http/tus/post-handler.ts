import { finishedStatus } from './tus-answers.js';
import { callerOf, requestCallerOf, requestOfMetadata } from './tus-caller.js';
import type { TusHandler } from './tus-handler.js';

/**
 * POST /uploads: tus's creation, and creation-with-upload. The upload is recorded with its
 * volume reserved (ResumableUploadsService.create, from tus's onUploadCreate); a body that
 * carries the whole file finishes it at once, answered 201 with the file. An upload into
 * an upload request names it in the metadata (`request`) and needs no API key: the
 * request's password or link cookie instead (issue 25).
 */
export const handlePost: TusHandler = async (endpoint, request, reply) => {
  const requestId = requestOfMetadata(request);
  const caller = requestId === undefined ? await callerOf(endpoint.context, request) : await requestCallerOf(endpoint.context, request, requestId);
  return endpoint.answer(request, reply, await endpoint.pass(request, reply, caller, { finishStatus: finishedStatus(request) }));
};
