import { finishedStatus } from './tus-answers.js';
import type { TusHandler } from './tus-handler.js';
import { CHECKSUM_ALGORITHMS } from './upload-checksum.js';

/** OPTIONS: tus's discovery (versions, extensions, the largest file) and the CORS preflight; open to anyone. */
export const handleOptions: TusHandler = async (endpoint, request, reply, id) => {
  reply.header('Tus-Checksum-Algorithm', CHECKSUM_ALGORITHMS.join(','));
  return endpoint.answer(request, reply, await endpoint.pass(request, reply, null, { id, finishStatus: finishedStatus(request) }));
};
