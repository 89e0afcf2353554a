import assert from 'node:assert/strict';
import net from 'node:net';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import Fastify from 'fastify';
import type { FileRecord } from '../../src/domain/types.js';
import { sendFile } from '../../src/http/send-blob.js';

// A client that leaves while the download is being reserved or opened: the reservation
// must still be settled (afterBody) and an opened blob stream closed. Deterministic: the
// hooks wait for the client to be gone before they return.

const file: FileRecord = {
  id: 'ABCDEFGHIJ',
  ownerId: 1,
  folderId: null,
  name: 'x.bin',
  size: 1000,
  sha256: 'a'.repeat(64),
  status: 'A',
  createdAt: Date.parse('2026-11-21T10:00:00Z'),
  downloads: 0,
  lastDownloadAt: null,
  expiresAt: null,
};

async function serve(mode: 'leave-during-before' | 'leave-during-open') {
  const app = Fastify();
  const settled: Array<[number, number]> = [];
  let opened: Readable | undefined;
  app.get('/x', async (request, reply) => {
    const gone = new Promise<void>((resolve) => reply.raw.once('close', () => resolve()));
    return sendFile(request, reply, {
      file,
      beforeBody: async () => {
        if (mode === 'leave-during-before') await gone;
      },
      open: async () => {
        if (mode === 'leave-during-open') await gone;
        opened = Readable.from([Buffer.alloc(1000)]);
        return opened;
      },
      afterBody: (sent, planned) => settled.push([sent, planned]),
    });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /x HTTP/1.1\r\nHost: x\r\n\r\n'));
    // Leave once the server has started on the request (it holds the hook until then).
    setTimeout(() => socket.destroy(), 100);
    socket.on('close', () => resolve());
  });
  for (let i = 0; i < 50 && settled.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  await app.close();
  return { settled, opened };
}

test('a client gone during beforeBody still gets afterBody (refund) exactly once', async () => {
  const { settled, opened } = await serve('leave-during-before');
  assert.deepEqual(settled, [[0, 1000]]);
  assert.equal(opened, undefined, 'nothing is opened for a client that is gone');
});

test('a client gone during open gets afterBody once and the opened stream is closed', async () => {
  const { settled, opened } = await serve('leave-during-open');
  assert.deepEqual(settled, [[0, 1000]]);
  assert.equal(opened?.destroyed, true);
});
