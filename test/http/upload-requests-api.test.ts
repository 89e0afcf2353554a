// Upload requests, the owner's side (issue 25; docs/api.md "Upload requests"): create,
// list, show, change, close, with whole bodies compared with goldens written from the
// spec, ownership, bad input, and the operator's settings.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertAtomError, form, type ReadResponse, read } from '../helpers/api-checks.js';
import { startTestServer, type TestAccount, TestClock, type TestServer } from '../helpers/server.js';

const T0 = '2026-11-21T10:04:05Z';
const UPDATED = 'Sat, 21 Nov 2026 10:04:05 +0000';

let t: TestServer;
let clock: TestClock;
let owner: TestAccount;
let other: TestAccount;
before(async () => {
  clock = new TestClock(Date.parse(T0));
  t = await startTestServer({}, clock);
  owner = await t.account();
  other = await t.account();
});
after(() => t.close());

const api = async (account: TestAccount | null, method: string, path: string, fields?: Record<string, string>): Promise<ReadResponse> =>
  read(await t.fetch(path, { method, headers: account ? { Authorization: account.key } : {}, ...(fields ? { body: form(fields) } : {}) }));

const idOf = (body: string) => /<entry>\n {4}<id>([A-Za-z0-9]{22})<\/id>/.exec(body)?.[1] ?? assert.fail(`no request id in\n${body}`);

/** The whole feed of one request as the spec orders it; every value given by the test. */
function requestFeed(options: {
  status?: 'list';
  self: string;
  entries: Array<{
    id: string;
    title: string;
    folder: string;
    expires: string;
    maxFiles: string;
    files: number;
    maxBytes: string;
    bytes: number;
    protected: 'yes' | 'no';
    maxFileSize: string;
    message: string;
  }>;
  title?: string;
  next?: string;
}): string {
  const web = t.server.webUrl;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<feed xmlns="http://www.w3.org/2005/Atom" xmlns:ed="${web}/developers">`,
    `  <title>${options.title ?? 'Upload request'}</title>`,
    `  <id>${t.url}${options.self}</id>`,
    `  <updated>${UPDATED}</updated>`,
    '  <author>',
    `    <name>${web}</name>`,
    '  </author>',
  ];
  for (const e of options.entries) {
    lines.push(
      '  <entry>',
      `    <id>${e.id}</id>`,
      `    <title>${e.title}</title>`,
      `    <link title="request_link" href="${web}/r/${e.id}"/>`,
      `    <ed:folder>${e.folder}</ed:folder>`,
      `    <ed:expires>${e.expires}</ed:expires>`,
      `    <ed:max_files>${e.maxFiles}</ed:max_files>`,
      `    <ed:files>${e.files}</ed:files>`,
      `    <ed:max_bytes>${e.maxBytes}</ed:max_bytes>`,
      `    <ed:bytes>${e.bytes}</ed:bytes>`,
      `    <ed:protected>${e.protected}</ed:protected>`,
      `    <ed:max_file_size>${e.maxFileSize}</ed:max_file_size>`,
      `    <ed:message>${e.message}</ed:message>`,
      '  </entry>',
    );
  }
  lines.push(`  <link rel="self" href="${options.self}"/>`);
  if (options.next) lines.push(`  <link rel="next" href="${options.next}"/>`);
  lines.push('</feed>', '');
  return lines.join('\n');
}

const blank = { folder: '', expires: '', maxFiles: '', files: 0, maxBytes: '', bytes: 0, protected: 'no' as const, maxFileSize: '', message: '', title: '' };

describe('POST /requests', () => {
  test('201 with every field: the whole body as the spec orders it; the row, the password hash and the audit entry', async () => {
    const folder = await t.server.services.folders.create(owner.account, 'Inbox');
    const response = await api(owner, 'POST', '/requests', {
      folder: folder.id,
      title: 'Holiday photos & <videos>',
      message: 'Drop them here, please',
      expires_in: '86400',
      password: 'open sesame',
      max_files: '3',
      max_bytes: '1000000',
      max_file_size: '500000',
    });
    assert.equal(response.status, 201, response.body);
    assert.equal(response.headers.get('content-type'), 'application/atom+xml; charset=utf-8');
    const id = idOf(response.body);
    assert.equal(
      response.body,
      requestFeed({
        self: '/requests',
        entries: [
          {
            id,
            title: 'Holiday photos &amp; &lt;videos&gt;',
            folder: folder.id,
            expires: '2026-11-22 10:04:05',
            maxFiles: '3',
            files: 0,
            maxBytes: '1000000',
            bytes: 0,
            protected: 'yes',
            maxFileSize: '500000',
            message: 'Drop them here, please',
          },
        ],
      }),
    );
    const row = await t.server.services.store.uploadRequests.byId(id);
    assert.match(row?.passwordHash ?? '', /^scrypt\$32768\$8\$1\$/);
    assert.equal(row?.ownerId, owner.account.id);
    const audit = await t.server.services.store.audit.list({ limit: 5, action: 'requests.' });
    assert.equal(audit[0]?.action, 'requests.create');
    assert.equal(audit[0]?.object, `request:${id}`);
    assert.equal(audit[0]?.actor, `account:${owner.login}`);
    assert.ok(!audit[0]?.details.includes('sesame'), 'the password is never in the audit log');
  });

  test('201 with no field: the top folder, never expires, unlimited: empty elements, never self-closed', async () => {
    const response = await api(owner, 'POST', '/requests', {});
    assert.equal(response.status, 201, response.body);
    const id = idOf(response.body);
    assert.equal(response.body, requestFeed({ self: '/requests', entries: [{ ...blank, id }] }));
  });

  test('bad fields are errorWrongParameters (400) and create nothing', async () => {
    const before = await t.server.services.store.uploadRequests.listOwned(other.account.id, { limit: 100 });
    const bad: Array<Record<string, string>> = [
      { expires_in: '0' },
      { expires_in: '-5' },
      { expires_in: '1.5' },
      { expires_in: '99999999999999' },
      { max_files: '0' },
      { max_files: 'three' },
      { max_bytes: '-1' },
      { max_file_size: '1e6' },
      { title: 'x'.repeat(256) },
      { message: 'bell \u0007' },
    ];
    for (const fields of bad) {
      assertAtomError(await api(other, 'POST', '/requests', fields), 400, 'errorWrongParameters');
    }
    assert.deepEqual(await t.server.services.store.uploadRequests.listOwned(other.account.id, { limit: 100 }), before);
  });

  test('another account’s folder is errorPermissionDenied; an unknown one errorFolderNotFound; no key errorPermissionDenied 401', async () => {
    const folder = await t.server.services.folders.create(owner.account, 'Mine');
    assertAtomError(await api(other, 'POST', '/requests', { folder: folder.id }), 403, 'errorPermissionDenied');
    assertAtomError(await api(other, 'POST', '/requests', { folder: 'ZZZZZZZZZZ' }), 404, 'errorFolderNotFound');
    assertAtomError(await api(null, 'POST', '/requests', {}), 401, 'errorPermissionDenied', 'Wrong apikey');
  });
});

describe('GET, PUT, DELETE /requests/<id>', () => {
  test('the owner sees, changes and closes it; the counts stay; another account gets errorShareNotFound for each', async () => {
    const created = await api(owner, 'POST', '/requests', { title: 'Drafts', max_files: '5', password: 'pw', expires_in: '60' });
    const id = idOf(created.body);
    const path = `/requests/${id}`;
    const shown = await api(owner, 'GET', path);
    assert.equal(shown.status, 200);
    const expected = { ...blank, id, title: 'Drafts', maxFiles: '5', protected: 'yes' as const, expires: '2026-11-21 10:05:05' };
    assert.equal(shown.body, requestFeed({ self: path, entries: [expected] }));

    for (const [method, fields] of [
      ['GET', undefined],
      ['PUT', { title: 'stolen' }],
      ['DELETE', undefined],
    ] as const) {
      assertAtomError(await api(other, method, path, fields), 404, 'errorShareNotFound', 'Upload request does not exist or was closed');
    }

    // Files came in meanwhile: the counts stay through a change.
    await t.server.services.store.uploadRequests.countStored(id, 1234);
    const changed = await api(owner, 'PUT', path, {
      expires_in: '0',
      password: '',
      max_files: '0',
      max_bytes: '4096',
      max_file_size: '0',
      title: 'Final',
      message: 'Thanks!',
    });
    assert.equal(changed.status, 200, changed.body);
    const after = { ...blank, id, title: 'Final', maxBytes: '4096', files: 1, bytes: 1234, message: 'Thanks!' };
    assert.equal(changed.body, requestFeed({ self: path, entries: [after] }));
    // Sent as POST with _method=PUT, as API.md 2 allows.
    const viaPost = await api(owner, 'POST', path, { _method: 'PUT', expires_in: '3600' });
    assert.equal(viaPost.body, requestFeed({ self: path, entries: [{ ...after, expires: '2026-11-21 11:04:05' }] }));
    assertAtomError(await api(owner, 'PUT', path, { max_files: '-1' }), 400, 'errorWrongParameters');

    const closed = await api(owner, 'DELETE', path);
    assert.equal(closed.status, 200, closed.body);
    assert.equal(closed.body, requestFeed({ self: path, entries: [{ ...after, expires: '2026-11-21 11:04:05' }] }));
    assertAtomError(await api(owner, 'GET', path), 404, 'errorShareNotFound');
    assertAtomError(await api(owner, 'DELETE', path), 404, 'errorShareNotFound');
    assertAtomError(await api(owner, 'GET', '/requests/not-a-link-id'), 404, 'errorShareNotFound');
    const audit = (await t.server.services.store.audit.list({ limit: 10, action: 'requests.' })).filter((entry) => entry.object === `request:${id}`);
    assert.deepEqual(
      audit.map((entry) => entry.action),
      ['requests.close', 'requests.change', 'requests.change', 'requests.create'],
    );
    assert.equal(audit[2]?.details, 'title message expires=never max_files=none max_bytes=4096 max_file_size=none password removed');
  });
});

describe('GET /requests', () => {
  test('the caller’s open requests, newest first, paged by limit and cursor; closed and other accounts’ ones left out', async () => {
    const lister = await t.account();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      ids.push(idOf((await api(lister, 'POST', '/requests', { title: `r${i}` })).body));
    }
    clock.advance(1000);
    const gone = idOf((await api(lister, 'POST', '/requests', { title: 'gone' })).body);
    await api(lister, 'DELETE', `/requests/${gone}`);
    await api(other, 'POST', '/requests', { title: 'not yours' });
    clock.set(T0);

    const first = await api(lister, 'GET', '/requests?limit=2');
    assert.equal(first.status, 200);
    const nextAttr = /<link rel="next" href="([^"]+)"\/>/.exec(first.body)?.[1] ?? assert.fail(first.body);
    assert.match(nextAttr, /^\/requests\?limit=2&amp;cursor=[A-Za-z0-9_-]+$/);
    const next = nextAttr.replace('&amp;', '&');
    assert.equal(
      first.body,
      requestFeed({
        title: 'Upload request list',
        // The feed's id and self link name the resource, without the query (API.md 3).
        self: '/requests',
        entries: [
          { ...blank, id: ids[2]!, title: 'r2' },
          { ...blank, id: ids[1]!, title: 'r1' },
        ],
        next: nextAttr,
      }),
    );
    const second = await api(lister, 'GET', next);
    assert.equal(second.body, requestFeed({ title: 'Upload request list', self: '/requests', entries: [{ ...blank, id: ids[0]!, title: 'r0' }] }));
    assertAtomError(await api(lister, 'GET', '/requests?cursor=Zm9v'), 400, 'errorBadRequest');
    const empty = await api(await t.account(), 'GET', '/requests');
    assert.equal(empty.body, requestFeed({ title: 'Upload request list', self: '/requests', entries: [] }));
  });
});

describe('operator settings', () => {
  test('--upload-requests off: creation is errorPermissionDenied 403; a password required; the expiry cap', async () => {
    const off = await startTestServer({ uploadRequests: false });
    try {
      const account = await off.account();
      const response = await read(await off.fetch('/requests', { method: 'POST', headers: { Authorization: account.key }, body: form({}) }));
      assertAtomError(response, 403, 'errorPermissionDenied', 'Upload requests are turned off on this server');
    } finally {
      await off.close();
    }
    const strict = await startTestServer({ sharePasswordRequired: true, shareMaxExpiryMs: 3_600_000 }, new TestClock(Date.parse(T0)));
    try {
      const account = await strict.account();
      const post = async (fields: Record<string, string>) =>
        read(await strict.fetch('/requests', { method: 'POST', headers: { Authorization: account.key }, body: form(fields) }));
      assertAtomError(await post({}), 400, 'errorWrongParameters', 'password is required on this server');
      assertAtomError(await post({ password: 'pw', expires_in: '3601' }), 400, 'errorWrongParameters');
      const capped = await post({ password: 'pw' });
      assert.equal(capped.status, 201, capped.body);
      assert.match(capped.body, /<ed:expires>2026-11-21 11:04:05<\/ed:expires>/, 'absent expiry takes the cap');
      const id = idOf(capped.body);
      const put = async (fields: Record<string, string>) =>
        read(await strict.fetch(`/requests/${id}`, { method: 'PUT', headers: { Authorization: account.key }, body: form(fields) }));
      assertAtomError(await put({ password: '' }), 400, 'errorWrongParameters');
      assertAtomError(await put({ expires_in: '0' }), 400, 'errorWrongParameters');
    } finally {
      await strict.close();
    }
  });
});
