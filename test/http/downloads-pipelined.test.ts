import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Two downloads pipelined on one connection: Node gives the second response no socket
 * until the first is sent, and a download must not take that for a client that left
 * (it then sent nothing and the connection hung).
 */
let t: TestServer;
let path: string;

before(async () => {
  t = await startTestServer();
  const user = await t.account();
  const uploaded = await t.upload(user.key, 'two.bin', 'ab');
  path = new URL(uploaded.downloadLink).pathname;
});
after(() => t.close());

test('pipelined downloads are both answered, in order', async () => {
  const { port } = new URL(t.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  const head = (connection: string) => `GET ${path}?download=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: ${connection}\r\n\r\n`;
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (received += chunk));
  const ended = new Promise<void>((resolve, reject) => {
    socket.on('end', () => resolve());
    socket.on('error', reject);
    socket.setTimeout(10_000, () => reject(new Error(`no complete answer within 10 s; got: ${JSON.stringify(received)}`)));
  });
  socket.write(head('keep-alive') + head('close'));
  await ended;
  socket.destroy();
  const answers = received.split(/(?=HTTP\/1\.1 )/);
  assert.equal(answers.length, 2, received);
  for (const answer of answers) {
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.match(answer, /\r\n\r\nab$/);
  }
});
