import { finishedStatus } from './tus-answers.js';
import { callersUpload, type TusItemHandler } from './tus-handler.js';

/**
 * DELETE /uploads/<id>: tus's termination, the upload's bytes, row and reservation
 * (ResumableDataStore.remove). An upload that became a file only forgets the upload: the
 * file stays.
 */
export const handleDelete: TusItemHandler = async (endpoint, request, reply, id) => {
  const { caller, record } = await callersUpload(endpoint, request, id);
  if (record.fileId !== null) {
    reply.header('Tus-Resumable', '1.0.0');
    await endpoint.context.services.resumable.service.terminate(id);
    return reply.code(204).send();
  }
  return endpoint.answer(request, reply, await endpoint.pass(request, reply, caller, { id, finishStatus: finishedStatus(request) }));
};
