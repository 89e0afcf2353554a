import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explainUploadProblem, type UploadLimits } from '../../src/http/web/upload-messages.js';

// The uploader's words for a failed request (issue 23, defect 3): the site's own refusal
// (its Atom error or JSON) is the site's; an answer that is not the site's (nginx's 413 page
// when a request is over client_max_body_size, its 502 page) is named as the proxy's, never
// as the site's limit per file.

const limits: UploadLimits = { maxFileSize: 10 * 1024 ** 3, volumeLeft: null, volumeLimit: null };

test("the site's 413 names its limit per file; a proxy's 413 names the proxy and the refused request's size", () => {
  assert.equal(
    explainUploadProblem({ status: 413, code: 'errorFileSize', message: 'File size exceeds the limit of 5242880 bytes', fromSite: true }, limits),
    'This file is larger than the limit of 5.0 MiB per file. Nothing of it was kept.',
  );
  assert.equal(
    explainUploadProblem({ status: 413, fromSite: false, requestBytes: 64 * 1024 * 1024 }, limits),
    "The proxy in front of this site refused a request of 64.0 MiB (HTTP 413): its size limit is lower than the site's own. Nothing of the file was kept. Please tell the site's operator.",
  );
  assert.match(explainUploadProblem({ status: 413, fromSite: false }, limits), /^The proxy in front of this site refused a request \(HTTP 413\)/);
});

test("other answers that are not the site's are the proxy's too; no answer at all is a lost connection", () => {
  assert.equal(
    explainUploadProblem({ status: 502, fromSite: false }, limits),
    'The proxy in front of this site could not reach the server (HTTP 502). Please press Retry in a moment.',
  );
  assert.match(
    explainUploadProblem({ status: 403, fromSite: false }, limits),
    /^The proxy in front of this site refused the request \(HTTP 403\), not the site itself\./,
  );
  assert.equal(
    explainUploadProblem({ status: 502, code: 'errorUploadFaild', fromSite: true }, limits),
    'The server could not take the file (a problem on its side). Please press Retry in a moment.',
  );
  assert.equal(explainUploadProblem({ status: 0, fromSite: false }, limits), 'The connection to the server was lost. Press Retry to try again.');
  assert.equal(
    explainUploadProblem({ status: 0, fromSite: false, offline: true }, limits),
    'You are offline: the upload stopped. Connect again, then press Retry.',
  );
});
