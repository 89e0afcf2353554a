// Issue 23, defect 3, the SDK's side: a tus upload goes in PATCHes no larger than the
// server's Filehaven-Max-Chunk-Size (or the caller's smaller chunkSize), and an answer that
// is not filehaven's (a proxy's 413 or error page) is said to be the proxy's.
// The proxy here is a stand-in fetch with a body limit, as nginx's client_max_body_size
// (upload-through-proxy.test.ts runs the real nginx with a file of 2.5 GiB).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FetchFunction, FilehavenClient } from '../../src/client/index.js';
import { sha256 } from '../helpers/downloads.js';
import { failure } from '../helpers/sdk-failure.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const SERVER_CHUNK = MiB;

let t: TestServer;
let ada: TestAccount;
let dir: string;
let file: string;
let content: Buffer;
before(async () => {
  t = await startTestServer({ uploadChunkSize: SERVER_CHUNK });
  ada = await t.account();
  dir = await mkdtemp(path.join(tmpdir(), 'filehaven-chunks-'));
  content = randomBytes(3 * MiB + 512 * KiB + 7);
  file = path.join(dir, 'chunked.bin');
  await writeFile(file, content);
});
after(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

const ERROR_PAGE = (status: string) =>
  `<html>\r\n<head><title>${status}</title></head>\r\n<body>\r\n<center><h1>${status}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;

/**
 * A client behind a stand-in proxy: requests whose declared body is over `limit` bytes
 * get the proxy's own 413 page and never reach the server; the body sizes of the PATCHes
 * that do are recorded.
 */
function behindProxy(limit = Number.POSITIVE_INFINITY, answer?: (url: URL, init: RequestInit | undefined) => Response | null) {
  const patches: number[] = [];
  const proxy: FetchFunction = async (input, init) => {
    const url = new URL(String(input));
    const headers = new Headers(init?.headers);
    const length = Number(headers.get('content-length') ?? 0);
    const own = answer?.(url, init);
    if (own) return own;
    if (length > limit) return new Response(ERROR_PAGE('413 Request Entity Too Large'), { status: 413, headers: { 'Content-Type': 'text/html' } });
    if (init?.method === 'PATCH') patches.push(length);
    return fetch(input, init);
  };
  return { client: new FilehavenClient({ server: t.url, key: ada.key, fetch: proxy }), patches };
}

async function storedDigest(id: string): Promise<string | undefined> {
  return (await t.server.services.store.files.byId(id))?.sha256;
}

describe('chunk size', () => {
  test("PATCHes are at most the server's Filehaven-Max-Chunk-Size, or the caller's smaller chunkSize; a larger one is capped", async () => {
    const cases = [
      { chunkSize: undefined, largest: SERVER_CHUNK },
      { chunkSize: 300 * KiB, largest: 300 * KiB },
      { chunkSize: 64 * MiB, largest: SERVER_CHUNK },
    ];
    for (const { chunkSize, largest } of cases) {
      const { client, patches } = behindProxy();
      const stored = await client.upload(file, { transport: 'tus', chunkSize });
      assert.equal(patches.length, Math.ceil(content.length / largest), `chunkSize ${chunkSize}: ${patches.join(', ')}`);
      assert.ok(
        patches.every((bytes) => bytes <= largest),
        `chunkSize ${chunkSize}: ${patches.join(', ')}`,
      );
      assert.equal(await storedDigest(stored.id), sha256(content));
      assert.ok(stored.deleteLink, 'the File upload result of the last PATCH, asked for');
    }
    await assert.rejects(new FilehavenClient({ server: t.url, key: ada.key }).upload(file, { chunkSize: 0 }), TypeError);
  });
});

describe("answers that are not filehaven's", () => {
  test("a proxy's 413 for a PATCH is said to be the proxy's, with the size refused and what to do; a smaller chunkSize gets through", async () => {
    const { client } = behindProxy(768 * KiB);
    const error = await failure(client.upload(file, { transport: 'tus' }));
    assert.equal(error.code, 'errorUnexpectedResponse');
    assert.equal(error.status, 413);
    const origin = new URL(t.url).origin;
    assert.equal(
      error.message,
      `the proxy in front of ${origin} refused a request of ${SERVER_CHUNK} bytes (1.0 MiB) (HTTP 413, not filehaven's answer: "413 Request Entity Too Large"): its body limit is below that size; the site asks for PATCHes of up to ${SERVER_CHUNK} bytes (its --upload-chunk-size), more than the proxy takes: its operator should lower that; meanwhile send smaller ones (the SDK's chunkSize, the CLI's --chunk-size)`,
    );
    const stored = await client.upload(file, { transport: 'tus', chunkSize: 512 * KiB });
    assert.equal(await storedDigest(stored.id), sha256(content));
  });

  test("a proxy's 413 for POST /files names the request's size, never the site's file limit", async () => {
    const { client } = behindProxy(MiB);
    const error = await failure(client.upload(file, { transport: 'post' }));
    assert.equal(error.status, 413);
    assert.match(error.message, /^the proxy in front of \S+ refused a request of \d+ bytes \(3\.5 MiB\) \(HTTP 413, not filehaven's answer/);
  });

  test("a gateway's error page is not read as one of the API's errors (a 404 page is not errorFileNotFound)", async () => {
    for (const status of [502, 404]) {
      const reason = status === 502 ? `${status} Bad Gateway` : `${status} Not Found`;
      const { client } = behindProxy(undefined, (url) =>
        url.pathname === '/account' ? new Response(ERROR_PAGE(reason), { status, headers: { 'Content-Type': 'text/html' } }) : null,
      );
      const error = await failure(client.account());
      assert.equal(error.code, 'errorUnexpectedResponse', error.message);
      assert.equal(error.status, status);
      assert.equal(
        error.message,
        `HTTP ${status} from ${new URL(t.url).origin} is not filehaven's answer (no Atom error): a proxy or gateway in front of the site answered: "${reason}"`,
      );
    }
  });
});
