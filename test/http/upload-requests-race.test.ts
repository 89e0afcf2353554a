// Upload requests across servers (issue 25): max_files holds exactly when uploads race on
// two servers of one site (separate processes, one database), as premium traffic does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertOk, runCli } from '../helpers/cli.js';
import { Cluster, nginxSkip } from '../helpers/cluster.js';

let cluster: Cluster;
let key: string;

async function call(url: string, init: RequestInit): Promise<{ status: number; body: string; headers: Headers }> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.text(), headers: response.headers };
}

describe('two servers, one database', { skip: nginxSkip() }, () => {
  before(async () => {
    cluster = await Cluster.start({ servers: 2, args: ['--api-rate-per-key', '100000', '--api-rate-per-ip', '100000'] });
    assertOk(await runCli(['accounts', 'create', '--login', 'ada', '--password', 'correct horse'], cluster.cliEnv));
    const made = await call(`${cluster.serverUrl(0)}/apikeys`, { method: 'POST', body: new URLSearchParams({ login: 'ada', password: 'correct horse' }) });
    key = /<content type="text">([^<]+)</.exec(made.body)?.[1] ?? assert.fail(made.body);
  });
  after(() => cluster?.stop());

  test('12 simultaneous uploads into a max_files=3 request, sent to both servers: exactly 3 files, 9 errorUploadLimit', async () => {
    const created = await call(`${cluster.serverUrl(1)}/requests`, {
      method: 'POST',
      headers: { Authorization: key },
      body: new URLSearchParams({ max_files: '3', title: 'Race' }),
    });
    assert.equal(created.status, 201, created.body);
    const id = /<entry>\n {4}<id>([A-Za-z0-9]{22})<\/id>/.exec(created.body)![1]!;
    const uploads = Array.from({ length: 12 }, (_, i) => {
      const body = new FormData();
      // Large enough that the uploads overlap on both servers.
      body.append('upload', new Blob([Buffer.alloc(256 * 1024, i)]), `racer-${i}.bin`);
      return call(`${cluster.serverUrl(i % 2)}/r/${id}`, { method: 'POST', body });
    });
    const answers = await Promise.all(uploads);
    const stored = answers.filter((answer) => answer.status === 201);
    const refused = answers.filter((answer) => answer.status === 429 && /<title>errorUploadLimit<\/title>/.test(answer.body));
    assert.equal(stored.length, 3, answers.map((answer) => `${answer.status} ${answer.body.slice(0, 400)}`).join('\n'));
    assert.equal(refused.length, 9);
    for (const answer of refused) assert.match(answer.body, /Upload request is full/);
    const shown = await call(`${cluster.serverUrl(0)}/requests/${id}`, { headers: { Authorization: key } });
    assert.match(shown.body, /<ed:max_files>3<\/ed:max_files>\n {4}<ed:files>3<\/ed:files>/);
    assert.match(shown.body, new RegExp(`<ed:bytes>${3 * 256 * 1024}</ed:bytes>`));
    const files = await call(`${cluster.serverUrl(1)}/files`, { headers: { Authorization: key } });
    assert.equal((files.body.match(/<title>racer-\d+\.bin<\/title>/g) ?? []).length, 3, files.body);
  });
});
