import { isPartial } from '../../uploads/upload-concat.js';
import { fileHeaders, finishedStatus, requestFileHeaders, uploadConcatHeader } from './tus-answers.js';
import { callersUpload, type TusItemHandler } from './tus-handler.js';

/**
 * HEAD /uploads/<id>: the upload's offset, for a client to resume. An upload that became a
 * file says so (its id and download link); one whose last byte is stored but whose file was
 * not made (a server died in between) is made a file now. A partial or final upload of
 * tus's concatenation says so in Upload-Concat; a whole partial stays one.
 */
export const handleHead: TusItemHandler = async (endpoint, request, reply, id) => {
  const { services, links } = endpoint.context;
  const { service } = services.resumable;
  const { caller, record } = await callersUpload(endpoint, request, id);
  const concat = uploadConcatHeader(links, caller, record);
  if (concat !== null) reply.header('Upload-Concat', concat);
  if (record.fileId !== null) {
    reply.header('Tus-Resumable', '1.0.0');
    const finished = await service.storedFile({ ...record, fileId: record.fileId });
    return reply
      .code(200)
      .headers({
        'Upload-Offset': String(record.length),
        'Upload-Length': String(record.length),
        'Cache-Control': 'no-store',
        ...(caller.request ? requestFileHeaders(finished.file) : fileHeaders(links, finished.file, null)),
      })
      .send();
  }
  const exchange = await endpoint.pass(request, reply, caller, { id, finishStatus: finishedStatus(request) });
  const { response, state } = exchange;
  // A whole partial upload waits for its final: nothing to finish, and no lock to wait for
  // while a final is joining it.
  if (!state.error && response.status < 400 && finishedOffsets(response) && !isPartial(record)) {
    // This answer is the one that stored it, so it shows the delete link.
    const finished = await service.finish(caller.account, id);
    if (finished)
      reply.headers({
        'Cache-Control': 'no-store',
        ...(caller.request ? requestFileHeaders(finished.file) : fileHeaders(links, finished.file, finished.deleteSecret)),
      });
  }
  return endpoint.answer(request, reply, exchange);
};

/** Whether a tus HEAD answer says every byte is stored. */
function finishedOffsets(response: Response): boolean {
  const offset = response.headers.get('upload-offset');
  return offset !== null && offset === response.headers.get('upload-length');
}
