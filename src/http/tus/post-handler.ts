import { finishedStatus } from './tus-answers.js';
import { callerOf } from './tus-caller.js';
import type { TusHandler } from './tus-handler.js';

/**
 * POST /uploads: tus's creation, and creation-with-upload. The upload is recorded with its
 * volume reserved (ResumableUploadsService.create, from tus's onUploadCreate); a body that
 * carries the whole file finishes it at once, answered 201 with the file.
 */
export const handlePost: TusHandler = async (endpoint, request, reply) => {
  const caller = await callerOf(endpoint.context, request);
  return endpoint.answer(request, reply, await endpoint.pass(request, reply, caller, { finishStatus: finishedStatus(request) }));
};
