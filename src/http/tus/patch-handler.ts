import { ApiError } from '../../domain/errors.js';
import { partsOfFinal } from '../../uploads/upload-concat.js';
import { finishedStatus, sendFinished } from './tus-answers.js';
import { callersUpload, type TusItemHandler } from './tus-handler.js';
import { type VerifiedBody, verifyChecksum } from './upload-checksum.js';

/**
 * PATCH /uploads/<id>: more bytes at the upload's offset, hashed as they pass
 * (ResumableDataStore); the limits are checked again first (API.md 8), and a body with
 * Upload-Checksum is verified before a byte is stored. The PATCH that stores the last byte
 * makes the file (tus's onUploadFinish) and answers with it; one sent again after that
 * answers the same file. A final upload of tus's concatenation takes no PATCH (403, as tus
 * says).
 */
export const handlePatch: TusItemHandler = async (endpoint, request, reply, id) => {
  const { context } = endpoint;
  const { service, dataStore } = context.services.resumable;
  const { caller, record } = await callersUpload(endpoint, request, id);
  if (partsOfFinal(record) !== null) {
    throw new ApiError(
      'errorUploadFaild',
      403,
      'Upload failed: a final upload (Upload-Concat: final) takes no PATCH; its bytes are those of its partial uploads',
    );
  }
  if (record.fileId !== null) {
    reply.header('Tus-Resumable', '1.0.0');
    const finished = await service.storedFile({ ...record, fileId: record.fileId });
    if (Number(request.headers['upload-offset']) !== record.length)
      throw new ApiError('errorUploadFaild', 409, 'Upload failed: the upload is complete; its Upload-Offset is its length');
    reply.header('Upload-Offset', String(record.length));
    return sendFinished(context, request, reply, finished, finishedStatus(request), caller.request !== undefined);
  }
  await service.beforeWrite(caller.account, record);
  let verified: VerifiedBody | undefined;
  const checksum = request.headers['upload-checksum'];
  if (typeof checksum === 'string') {
    // A wrong offset is told before a byte is spooled (tus checks it again, locked).
    const stored = await dataStore.getUpload(id);
    if (Number(request.headers['upload-offset']) !== stored.offset) throw new ApiError('errorUploadFaild', 409, 'Upload failed: Upload-Offset conflict');
    verified = await verifyChecksum(request.raw, checksum, record.length - stored.offset);
  }
  return endpoint.answer(request, reply, await endpoint.pass(request, reply, caller, { id, finishStatus: finishedStatus(request) }, verified));
};
