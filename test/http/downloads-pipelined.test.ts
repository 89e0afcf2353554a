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

test('a download queued behind another gives its slot back when the client leaves before it starts', async () => {
  const { key } = await t.account();
  const big = await t.upload(key, 'big.bin', Buffer.alloc(8 * 1024 * 1024, 7));
  const bigPath = new URL(big.downloadLink).pathname;
  const slots = () => t.server.services.limits.freeDownloads.inProgress('127.0.0.1');
  assert.equal(slots(), 0);
  const { port } = new URL(t.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  // The first download is never read, so the second (queued behind it) is read, opened and
  // held with no socket of its own; then the client leaves.
  socket.pause();
  const head = (target: string) => `GET ${target}?download=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
  socket.write(head(bigPath) + head(path));
  for (let i = 0; i < 100 && slots() < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(slots(), 2, 'both downloads hold a slot');
  socket.destroy();
  for (let i = 0; i < 100 && slots() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(slots(), 0, 'both slots are given back');
});
