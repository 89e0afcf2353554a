// WebDAV OPTIONS, PROPFIND and PROPPATCH (issue 27; RFC 4918 9.1, 9.2, RFC 4331), and the
// Basic sign-in in front of them. Files and folders are made through the API (POST /files,
// POST /folders, PUT /folders/<id>;files), then read and annotated over WebDAV.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { XMLValidator } from 'fast-xml-parser';
import { Secret, TOTP } from 'otpauth';
import { childOf, elementsOf, parseXml, textOf, type XmlElement } from '../../src/http/dav/dav-xml.js';
import { assertAtomOk, filesForm, form, type ReadResponse, read } from '../helpers/api-checks.js';
import { startTestServer, type TestAccount, type TestServer } from '../helpers/server.js';

const DAV = 'DAV:';
const Z = 'http://example.com/z';
const VOLUME = 1024 * 1024;

const basic = (login: string, secret: string) => `Basic ${Buffer.from(`${login}:${secret}`).toString('base64')}`;

interface DavCall {
  headers?: Record<string, string>;
  body?: string;
  /** Credentials; the account's login and key unless given (null: none). */
  auth?: string | null;
}

/** A property of a multistatus answer: the status of its propstat and the element. */
interface Found {
  status: number;
  element: XmlElement;
}

/** A multistatus body by href, then by property ("{ns}name"); asserts it is well-formed and 207-shaped. */
function multistatus(response: ReadResponse): Map<string, Map<string, Found>> {
  assert.equal(response.status, 207, response.body);
  assert.match(response.headers.get('content-type') ?? '', /^application\/xml/);
  assert.equal(XMLValidator.validate(response.body), true, response.body);
  const root = parseXml(response.body);
  assert.equal(`${root.ns}${root.name}`, 'DAV:multistatus');
  const answers = new Map<string, Map<string, Found>>();
  for (const entry of elementsOf(root)) {
    const href = textOf(childOf(entry, DAV, 'href')!);
    const properties = new Map<string, Found>();
    for (const propstat of elementsOf(entry).filter((child) => child.name === 'propstat')) {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(textOf(childOf(propstat, DAV, 'status')!))?.[1]);
      for (const element of elementsOf(childOf(propstat, DAV, 'prop')!)) properties.set(`{${element.ns}}${element.name}`, { status, element });
    }
    assert.ok(!answers.has(href), `${href} answered twice`);
    answers.set(href, properties);
  }
  return answers;
}

/** The text of a property found with 200. */
function textFound(properties: Map<string, Found> | undefined, name: string): string {
  const found = properties?.get(name);
  assert.ok(found, `${name} missing`);
  assert.equal(found.status, 200, name);
  return textOf(found.element);
}

const propfindOf = (...names: string[]) =>
  `<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:" xmlns:Z="${Z}"><D:prop>${names.map((name) => `<${name}/>`).join('')}</D:prop></D:propfind>`;

describe('WebDAV properties', () => {
  let t: TestServer;
  let owner: TestAccount;

  before(async () => {
    t = await startTestServer({ uploadVolumeFree: VOLUME, loginAttemptsPerMinute: 1000 });
    owner = await t.account();
  });
  after(() => t.close());

  function dav(method: string, path: string, call: DavCall = {}): Promise<ReadResponse> {
    const auth = call.auth === undefined ? basic(owner.login, owner.key) : call.auth;
    const headers: Record<string, string> = { ...call.headers };
    if (auth !== null) headers.Authorization = auth;
    return t.fetch(path, { method, headers, body: call.body }).then(read);
  }

  async function upload(account: TestAccount, name: string, content: string): Promise<string> {
    const up = await t.upload(account.key, name, content);
    assert.equal(up.response.status, 201, up.body);
    return up.id;
  }

  async function folder(account: TestAccount, name: string, parent?: string): Promise<string> {
    const response = await read(
      await t.fetch('/folders', { method: 'POST', headers: { Authorization: account.key }, body: form(parent ? { name, parent } : { name }) }),
    );
    return assertAtomOk(response, 201, 'Folder').entry.id;
  }

  async function moveInto(account: TestAccount, folderId: string, ids: string[]): Promise<void> {
    const response = await read(
      await t.fetch(`/folders/${folderId};files`, { method: 'POST', headers: { Authorization: account.key }, body: filesForm(ids, { _method: 'PUT' }) }),
    );
    assert.equal(response.status, 200, response.body);
  }

  test('OPTIONS needs no sign-in: 200, every method in Allow, DAV: 1, 2, no body', async () => {
    for (const path of ['/dav/', '/dav/nothing/here.txt']) {
      const response = await dav('OPTIONS', path, { auth: null });
      assert.equal(response.status, 200, response.body);
      assert.equal(response.body, '');
      assert.equal(response.headers.get('dav'), '1, 2');
      const allow = (response.headers.get('allow') ?? '').split(/,\s*/).sort();
      assert.deepEqual(allow, ['COPY', 'DELETE', 'GET', 'HEAD', 'LOCK', 'MKCOL', 'MOVE', 'OPTIONS', 'PROPFIND', 'PROPPATCH', 'PUT', 'UNLOCK']);
    }
  });

  test('PROPFIND of the top, a folder and a file, Depth 0 and 1, with their live properties', async () => {
    const account = await t.account();
    const auth = basic(account.login, account.key);
    const docs = await folder(account, 'Docs & <Notes>');
    const inner = await upload(account, 'ünïcode € report.txt', 'hello world');
    await moveInto(account, docs, [inner]);
    const top = await upload(account, 'top.bin', 'x'.repeat(10));

    const depth0 = multistatus(await dav('PROPFIND', '/dav/', { headers: { Depth: '0' }, auth }));
    assert.deepEqual([...depth0.keys()], ['/dav/']);
    const self = depth0.get('/dav/')!;
    assert.ok(childOf(self.get('{DAV:}resourcetype')!.element, DAV, 'collection'));
    assert.equal(self.get('{DAV:}getcontentlength'), undefined, 'a collection has no length');
    assert.ok(childOf(self.get('{DAV:}supportedlock')!.element, DAV, 'lockentry'));
    assert.ok(self.has('{DAV:}lockdiscovery'));

    const folderHref = `/dav/${encodeURIComponent('Docs & <Notes>')}/`;
    const fileHref = `/dav/${encodeURIComponent('ünïcode € report.txt')}`;
    const depth1 = multistatus(await dav('PROPFIND', '/dav/', { headers: { Depth: '1' }, auth }));
    assert.deepEqual([...depth1.keys()], ['/dav/', folderHref, '/dav/top.bin']);
    assert.ok(childOf(depth1.get(folderHref)!.get('{DAV:}resourcetype')!.element, DAV, 'collection'));
    assert.equal(textFound(depth1.get(folderHref), '{DAV:}displayname'), 'Docs & <Notes>');
    const bin = depth1.get('/dav/top.bin')!;
    assert.equal(elementsOf(bin.get('{DAV:}resourcetype')!.element).length, 0);
    assert.equal(textFound(bin, '{DAV:}getcontentlength'), '10');
    assert.equal(textFound(bin, '{DAV:}getcontenttype'), 'application/octet-stream');
    assert.equal(textFound(bin, '{DAV:}getetag'), `"${createHash('sha256').update('x'.repeat(10)).digest('hex')}"`);
    const record = (await t.server.services.store.files.byId(top))!;
    assert.equal(textFound(bin, '{DAV:}getlastmodified'), new Date(record.createdAt).toUTCString());
    assert.equal(Date.parse(textFound(bin, '{DAV:}creationdate')), Math.floor(record.createdAt / 1000) * 1000);

    // The folder itself and its file; the file alone at Depth 1 too.
    const inFolder = multistatus(await dav('PROPFIND', folderHref, { headers: { Depth: '1' }, auth }));
    const innerHref = `${folderHref}${encodeURIComponent('ünïcode € report.txt')}`;
    assert.deepEqual([...inFolder.keys()], [folderHref, innerHref]);
    const report = inFolder.get(innerHref)!;
    assert.equal(textFound(report, '{DAV:}getcontenttype'), 'text/plain');
    assert.equal(textFound(report, '{DAV:}displayname'), 'ünïcode € report.txt');
    assert.equal(textFound(report, '{DAV:}getcontentlength'), '11');
    const fileAlone = multistatus(await dav('PROPFIND', innerHref, { headers: { Depth: '1' }, auth }));
    assert.deepEqual([...fileAlone.keys()], [innerHref]);
    assert.equal((await dav('PROPFIND', fileHref, { headers: { Depth: '0' }, auth })).status, 404, 'the file is in the folder, not at the top');
    // The names are escaped in the XML itself, not only percent-encoded in hrefs.
    const raw = await dav('PROPFIND', folderHref, { headers: { Depth: '0' }, auth });
    assert.match(raw.body, /<D:displayname>Docs &amp; &lt;Notes&gt;<\/D:displayname>/);
  });

  test('namesakes: two files of one name are listed as "name" and "stem (<id>).ext", each at its own path', async () => {
    const account = await t.account();
    const auth = basic(account.login, account.key);
    const older = await upload(account, 'same.txt', 'first');
    const younger = await upload(account, 'same.txt', 'second one');
    const listing = multistatus(await dav('PROPFIND', '/dav/', { headers: { Depth: '1' }, auth, body: propfindOf('D:displayname', 'D:getcontentlength') }));
    const namesake = `same (${younger}).txt`;
    assert.deepEqual([...listing.keys()], ['/dav/', '/dav/same.txt', `/dav/${encodeURIComponent(namesake)}`]);
    assert.equal(textFound(listing.get('/dav/same.txt'), '{DAV:}getcontentlength'), '5');
    assert.equal(textFound(listing.get(`/dav/${encodeURIComponent(namesake)}`), '{DAV:}displayname'), namesake);
    const alone = multistatus(
      await dav('PROPFIND', `/dav/${encodeURIComponent(namesake)}`, { headers: { Depth: '0' }, auth, body: propfindOf('D:getcontentlength') }),
    );
    assert.equal(textFound(alone.get(`/dav/${encodeURIComponent(namesake)}`), '{DAV:}getcontentlength'), '10');
    assert.notEqual(older, younger);
  });

  test('Depth infinity, and no Depth (which means it), are refused with 403 DAV:propfind-finite-depth; a bad Depth is 400', async () => {
    for (const headers of [{ Depth: 'infinity' }, {}] as Record<string, string>[]) {
      const response = await dav('PROPFIND', '/dav/', { headers });
      assert.equal(response.status, 403, response.body);
      assert.match(response.body, /<D:error xmlns:D="DAV:"><D:propfind-finite-depth\/>/);
    }
    assert.equal((await dav('PROPFIND', '/dav/', { headers: { Depth: '2' } })).status, 400);
  });

  test('bodies that are no PROPFIND are 400; a missing resource is 404', async () => {
    for (const body of [
      'not xml at all',
      '<D:propfind xmlns:D="DAV:"><D:prop>',
      '<foo xmlns="DAV:"/>',
      '<D:propfind xmlns:D="DAV:"/>',
      '<D:propfind xmlns:D="DAV:"><D:prop><bar:foo xmlns:bar=""/></D:prop></D:propfind>',
    ]) {
      const response = await dav('PROPFIND', '/dav/', { headers: { Depth: '0' }, body });
      assert.equal(response.status, 400, `${body}: ${response.body}`);
    }
    assert.equal((await dav('PROPFIND', '/dav/no-such-file.txt', { headers: { Depth: '0' } })).status, 404);
    assert.equal((await dav('PROPFIND', '/dav/no/such/folder/', { headers: { Depth: '1' } })).status, 404);
  });

  test('a DOCTYPE with external entities is refused with 400, and nothing it names is fetched', async () => {
    let fetched = 0;
    const bait = http.createServer((_request, response) => {
      fetched++;
      response.end('<!ENTITY x "leaked">');
    });
    await new Promise<void>((resolve) => bait.listen(0, '127.0.0.1', resolve));
    try {
      const port = (bait.address() as AddressInfo).port;
      const bodies = [
        `<?xml version="1.0"?><!DOCTYPE D:propfind [<!ENTITY xxe SYSTEM "http://127.0.0.1:${port}/entity">]><D:propfind xmlns:D="DAV:"><D:prop><D:displayname>&xxe;</D:displayname></D:prop></D:propfind>`,
        `<?xml version="1.0"?><!DOCTYPE D:propfind [<!ENTITY % remote SYSTEM "http://127.0.0.1:${port}/dtd"> %remote;]><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`,
        '<?xml version="1.0"?><!DOCTYPE D:propfind [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><D:propfind xmlns:D="DAV:"><D:prop><Z:x xmlns:Z="urn:z">&xxe;</Z:x></D:prop></D:propfind>',
      ];
      for (const body of bodies) {
        const response = await dav('PROPFIND', '/dav/', { headers: { Depth: '0' }, body });
        assert.equal(response.status, 400, response.body);
        assert.doesNotMatch(response.body, /root:|leaked/);
        const patched = await dav('PROPPATCH', '/dav/', { body: body.replaceAll('propfind', 'propertyupdate') });
        assert.equal(patched.status, 400, patched.body);
      }
      assert.equal(fetched, 0);
    } finally {
      await new Promise((resolve) => bait.close(resolve));
    }
  });

  test('PROPPATCH sets and removes dead properties in order; PROPFIND returns them with their namespaces and Unicode intact', async () => {
    const id = await upload(owner, 'annotated.txt', 'annotated');
    const href = '/dav/annotated.txt';
    const unicode = 'Ünïcödé 😀 \u{10FFFD} 中文';
    const set = await dav('PROPPATCH', href, {
      body: `<?xml version="1.0" encoding="utf-8"?>
<D:propertyupdate xmlns:D="DAV:" xmlns:Z="${Z}" xmlns:Q="urn:other">
  <D:set><D:prop>
    <Z:author>${unicode}</Z:author>
    <Z:nested><Q:inner Q:kept="1" xml:lang="de" plain="a&amp;b">text &lt;escaped&gt;</Q:inner><Z:child/></Z:nested>
    <Z:empty/>
    <bare xmlns="">no namespace</bare>
    <Z:temporary>soon gone</Z:temporary>
    <Z:references>&#65536;&#x1F600;&amp;#65;<![CDATA[<&amp;>]]></Z:references>
  </D:prop></D:set>
  <D:remove><D:prop><Z:temporary/><Z:never-set/></D:prop></D:remove>
</D:propertyupdate>`,
    });
    const patched = multistatus(set).get(href)!;
    for (const name of [`{${Z}}author`, `{${Z}}nested`, `{${Z}}empty`, '{}bare', `{${Z}}temporary`, `{${Z}}never-set`]) {
      assert.equal(patched.get(name)?.status, 200, name);
    }

    const found = multistatus(
      await dav('PROPFIND', href, {
        headers: { Depth: '0' },
        body: propfindOf('Z:author', 'Z:nested', 'Z:empty', 'bare xmlns=""', 'Z:temporary', 'Z:references', 'D:getcontentlength'),
      }),
    ).get(href)!;
    assert.equal(textFound(found, `{${Z}}author`), unicode);
    const nested = found.get(`{${Z}}nested`)!.element;
    const [inner, child] = elementsOf(nested);
    assert.deepEqual([inner!.ns, inner!.name, textOf(inner!), inner!.attributes.plain], ['urn:other', 'inner', 'text <escaped>', 'a&b']);
    assert.deepEqual([child!.ns, child!.name], [Z, 'child']);
    // Attributes of other namespaces, and xml:lang, kept with their namespaces (RFC 4918 4.3).
    assert.deepEqual([inner!.attributes['Q:kept'], inner!.attributePrefixes?.Q, inner!.attributes['xml:lang']], ['1', 'urn:other', 'de']);
    assert.equal(textFound(found, `{${Z}}empty`), '');
    assert.equal(textFound(found, '{}bare'), 'no namespace');
    // Character references decoded once (litmus prophighunicode sends one); CDATA kept as it stands.
    assert.equal(textFound(found, `{${Z}}references`), '\u{10000}\u{1F600}&#65;<&amp;>');
    assert.equal(found.get(`{${Z}}temporary`)?.status, 404, 'set, then removed in the same request');
    assert.equal(textFound(found, '{DAV:}getcontentlength'), '9');

    // allprop shows the dead ones beside the live ones; propname names them.
    const all = multistatus(await dav('PROPFIND', href, { headers: { Depth: '0' } })).get(href)!;
    assert.equal(textFound(all, `{${Z}}author`), unicode);
    assert.equal(textFound(all, '{DAV:}getcontentlength'), '9');
    assert.equal(all.get('{DAV:}quota-used-bytes'), undefined, 'allprop leaves the quota out');
    const names = multistatus(await dav('PROPFIND', href, { headers: { Depth: '0' }, body: '<D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>' })).get(
      href,
    )!;
    assert.equal(names.get(`{${Z}}author`)?.status, 200);
    assert.equal(textOf(names.get(`{${Z}}author`)!.element), '');
    assert.equal(names.get('{DAV:}getetag')?.status, 200);

    // Replaced, then removed.
    multistatus(
      await dav('PROPPATCH', href, {
        body: `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><a:author xmlns:a="${Z}">second</a:author></D:prop></D:set></D:propertyupdate>`,
      }),
    );
    const replaced = multistatus(await dav('PROPFIND', href, { headers: { Depth: '0' }, body: propfindOf('Z:author') })).get(href)!;
    assert.equal(textFound(replaced, `{${Z}}author`), 'second');
    multistatus(
      await dav('PROPPATCH', href, {
        body: `<D:propertyupdate xmlns:D="DAV:"><D:remove><D:prop><Z:author xmlns:Z="${Z}"/></D:prop></D:remove></D:propertyupdate>`,
      }),
    );
    const removed = multistatus(await dav('PROPFIND', href, { headers: { Depth: '0' }, body: propfindOf('Z:author', 'Z:empty') })).get(href)!;
    assert.equal(removed.get(`{${Z}}author`)?.status, 404);
    assert.equal(removed.get(`{${Z}}empty`)?.status, 200);

    // A Depth 1 listing of the top shows the file's properties too; the top has its own.
    multistatus(
      await dav('PROPPATCH', '/dav/', {
        body: `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><Z:label xmlns:Z="${Z}">top</Z:label></D:prop></D:set></D:propertyupdate>`,
      }),
    );
    const listing = multistatus(await dav('PROPFIND', '/dav/', { headers: { Depth: '1' }, body: propfindOf('Z:empty', 'Z:label') }));
    assert.equal(textFound(listing.get('/dav/'), `{${Z}}label`), 'top');
    assert.equal(listing.get('/dav/')!.get(`{${Z}}empty`)?.status, 404);
    assert.equal(textFound(listing.get(href), `{${Z}}empty`), '');
    assert.equal(listing.get(href)!.get(`{${Z}}label`)?.status, 404);
    assert.ok(id);
  });

  test('PROPPATCH of a live property: 403 cannot-modify-protected-property, 424 for the rest, and nothing changes', async () => {
    await upload(owner, 'guarded.txt', 'guarded');
    const href = '/dav/guarded.txt';
    const response = await dav('PROPPATCH', href, {
      body: `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="${Z}"><D:set><D:prop><Z:first>1</Z:first></D:prop></D:set><D:set><D:prop><D:getetag>"mine"</D:getetag></D:prop></D:set><D:remove><D:prop><D:resourcetype/></D:prop></D:remove><D:set><D:prop><Z:last>2</Z:last></D:prop></D:set></D:propertyupdate>`,
    });
    const answer = multistatus(response).get(href)!;
    assert.equal(answer.get('{DAV:}getetag')?.status, 403);
    assert.equal(answer.get('{DAV:}resourcetype')?.status, 403);
    assert.equal(answer.get(`{${Z}}first`)?.status, 424);
    assert.equal(answer.get(`{${Z}}last`)?.status, 424);
    assert.match(response.body, /<D:status>HTTP\/1\.1 403 Forbidden<\/D:status><D:error><D:cannot-modify-protected-property\/><\/D:error>/);
    const after = multistatus(await dav('PROPFIND', href, { headers: { Depth: '0' }, body: propfindOf('Z:first', 'Z:last', 'D:getetag') })).get(href)!;
    assert.equal(after.get(`{${Z}}first`)?.status, 404);
    assert.equal(after.get(`{${Z}}last`)?.status, 404);
    assert.equal(textFound(after, '{DAV:}getetag'), `"${createHash('sha256').update('guarded').digest('hex')}"`);
  });

  test('PROPPATCH limits: a value over 16 KiB and a 101st property are 507, the rest 424; bad bodies 400; a missing resource 404', async () => {
    await upload(owner, 'limited.txt', 'limited');
    const href = '/dav/limited.txt';
    const big = await dav('PROPPATCH', href, {
      body: `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="${Z}"><D:set><D:prop><Z:small>ok</Z:small><Z:big>${'x'.repeat(64 * 1024 + 1)}</Z:big></D:prop></D:set></D:propertyupdate>`,
    });
    const bigAnswer = multistatus(big).get(href)!;
    assert.equal(bigAnswer.get(`{${Z}}big`)?.status, 507);
    assert.equal(bigAnswer.get(`{${Z}}small`)?.status, 424);

    const set = (from: number, to: number) =>
      `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="${Z}"><D:set><D:prop>${Array.from({ length: to - from }, (_, i) => `<Z:p${from + i}>${from + i}</Z:p${from + i}>`).join('')}</D:prop></D:set></D:propertyupdate>`;
    const hundred = multistatus(await dav('PROPPATCH', href, { body: set(0, 100) })).get(href)!;
    assert.equal(hundred.get(`{${Z}}p99`)?.status, 200);
    const more = multistatus(await dav('PROPPATCH', href, { body: set(99, 101) })).get(href)!;
    assert.equal(more.get(`{${Z}}p100`)?.status, 507);
    assert.equal(more.get(`{${Z}}p99`)?.status, 424, 'a replacement takes no room, but fails with the rest');
    // Room made in the same request counts.
    const swap = await dav('PROPPATCH', href, {
      body: `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="${Z}"><D:remove><D:prop><Z:p0/></D:prop></D:remove><D:set><D:prop><Z:p100>100</Z:p100></D:prop></D:set></D:propertyupdate>`,
    });
    assert.equal(multistatus(swap).get(href)!.get(`{${Z}}p100`)?.status, 200);

    for (const body of ['', 'nope', '<D:propfind xmlns:D="DAV:"/>', '<D:propertyupdate xmlns:D="DAV:"/>']) {
      assert.equal((await dav('PROPPATCH', href, { body })).status, 400, body);
    }
    const missing = await dav('PROPPATCH', '/dav/not-there.txt', { body: set(0, 1) });
    assert.equal(missing.status, 404, missing.body);
  });

  test('PROPPATCH bounds what a resource holds in all: a value over 16 KiB, and values past 64 KiB together, are 507', async () => {
    await upload(owner, 'bounded.txt', 'bounded');
    const href = '/dav/bounded.txt';
    const setOf = (name: string, bytes: number) =>
      `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="${Z}"><D:set><D:prop><Z:${name}>${'v'.repeat(bytes)}</Z:${name}></D:prop></D:set></D:propertyupdate>`;
    const tooLarge = await dav('PROPPATCH', href, { body: setOf('large', 16 * 1024 + 1) });
    assert.equal(multistatus(tooLarge).get(href)!.get(`{${Z}}large`)?.status, 507);
    assert.match(tooLarge.body, /16 KiB at most/);
    for (const name of ['a', 'b', 'c', 'd']) {
      assert.equal(
        multistatus(await dav('PROPPATCH', href, { body: setOf(name, 15 * 1024) }))
          .get(href)!
          .get(`{${Z}}${name}`)?.status,
        200,
        name,
      );
    }
    const fifth = await dav('PROPPATCH', href, { body: setOf('e', 15 * 1024) });
    assert.equal(multistatus(fifth).get(href)!.get(`{${Z}}e`)?.status, 507);
    assert.match(fifth.body, /64 KiB in all at most/);
    // A smaller value in place of a large one makes room.
    assert.equal(
      multistatus(await dav('PROPPATCH', href, { body: setOf('a', 1) }))
        .get(href)!
        .get(`{${Z}}a`)?.status,
      200,
    );
    assert.equal(
      multistatus(await dav('PROPPATCH', href, { body: setOf('e', 15 * 1024) }))
        .get(href)!
        .get(`{${Z}}e`)?.status,
      200,
    );
    const shown = multistatus(await dav('PROPFIND', href, { headers: { Depth: '0' }, body: propfindOf('Z:e') })).get(href)!;
    assert.equal(textFound(shown, `{${Z}}e`).length, 15 * 1024);
  });

  test('names like "constructor" and "__proto__" are names: an undefined entity 400, a "__proto__" prefix kept bound', async () => {
    await upload(owner, 'proto.txt', 'proto');
    const href = '/dav/proto.txt';
    for (const entity of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const body = `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="${Z}"><D:set><D:prop><Z:v>&${entity};</Z:v></D:prop></D:set></D:propertyupdate>`;
      const answer = await dav('PROPPATCH', href, { body });
      assert.equal(answer.status, 400, `&${entity};: ${answer.body}`);
    }
    const body = `<D:propertyupdate xmlns:D="DAV:" xmlns:Z="${Z}"><D:set><D:prop><Z:tagged><Z:in xmlns:__proto__="urn:p" __proto__:a="1">x</Z:in></Z:tagged></D:prop></D:set></D:propertyupdate>`;
    assert.equal(
      multistatus(await dav('PROPPATCH', href, { body }))
        .get(href)!
        .get(`{${Z}}tagged`)?.status,
      200,
    );
    // multistatus() parses the answer with namespaces: an unbound prefix would be BadXml.
    const shown = multistatus(await dav('PROPFIND', href, { headers: { Depth: '0' }, body: propfindOf('Z:tagged') })).get(href)!;
    const inner = elementsOf(shown.get(`{${Z}}tagged`)!.element)[0]!;
    assert.equal(inner.attributes['__proto__:a'], '1');
    assert.deepEqual(Object.entries(inner.attributePrefixes ?? {}), [['__proto__', 'urn:p']]);
  });

  test('quota-available-bytes and quota-used-bytes: the upload volume left and used; none for an unlimited account', async () => {
    const account = await t.account();
    const auth = basic(account.login, account.key);
    await upload(account, 'one.txt', 'a'.repeat(1000));
    await upload(account, 'two.txt', 'b'.repeat(234));
    const docs = await folder(account, 'docs');
    const body = propfindOf('D:quota-available-bytes', 'D:quota-used-bytes');
    const top = multistatus(await dav('PROPFIND', '/dav/', { headers: { Depth: '1' }, auth, body }));
    for (const href of ['/dav/', '/dav/docs/']) {
      assert.equal(textFound(top.get(href), '{DAV:}quota-used-bytes'), '1234');
      assert.equal(textFound(top.get(href), '{DAV:}quota-available-bytes'), String(VOLUME - 1234));
    }
    assert.equal(top.get('/dav/one.txt')!.get('{DAV:}quota-used-bytes')?.status, 404, 'files carry no quota');
    // DAV:include adds them to allprop.
    const included = multistatus(
      await dav('PROPFIND', '/dav/', {
        headers: { Depth: '0' },
        auth,
        body: '<D:propfind xmlns:D="DAV:"><D:allprop/><D:include><D:quota-used-bytes/></D:include></D:propfind>',
      }),
    );
    assert.equal(textFound(included.get('/dav/'), '{DAV:}quota-used-bytes'), '1234');
    assert.ok(included.get('/dav/')!.has('{DAV:}resourcetype'));
    assert.ok(docs);

    const premium = await t.account({ premiumDays: 30 });
    const unlimited = multistatus(await dav('PROPFIND', '/dav/', { headers: { Depth: '0' }, auth: basic(premium.login, premium.key), body })).get('/dav/')!;
    assert.equal(unlimited.get('{DAV:}quota-available-bytes')?.status, 404);
    assert.equal(unlimited.get('{DAV:}quota-used-bytes')?.status, 404);
  });

  test('a listing past one chunk of dead property reads (500 resources) answers every child, with its properties', async () => {
    const account = await t.account();
    const auth = basic(account.login, account.key);
    const count = 520;
    // One upload through the API, then its namesakes in bytes as rows of one transaction (as
    // dedup makes them): 520 uploads would cost the test most of its time, and the listing
    // reads rows only.
    const first = await upload(account, 'n0000.txt', 'same bytes');
    const { sha256, createdAt } = (await t.server.services.store.files.byId(first))!;
    await t.server.services.store.transaction(async (repos) => {
      for (let at = 1; at < count; at++) {
        const name = `n${String(at).padStart(4, '0')}.txt`;
        const id = `ROW${String(at).padStart(7, '0')}`;
        await repos.files.create({ id, ownerId: account.account.id, folderId: null, name, size: 10, sha256, deleteHash: id, createdAt: createdAt + at });
      }
    });
    const tag = (name: string, value: string) =>
      dav('PROPPATCH', `/dav/${name}`, {
        auth,
        body: `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><Z:tag xmlns:Z="${Z}">${value}</Z:tag></D:prop></D:set></D:propertyupdate>`,
      });
    const tags: [string, string][] = [
      ['n0000.txt', 'first'],
      ['n0519.txt', 'last'],
      ['', 'top'],
    ];
    for (const [name, value] of tags) assert.equal((await tag(name, value)).status, 207);
    const listing = multistatus(await dav('PROPFIND', '/dav/', { headers: { Depth: '1' }, auth, body: propfindOf('Z:tag', 'D:getcontentlength') }));
    assert.equal(listing.size, count + 1);
    assert.equal(textFound(listing.get('/dav/'), `{${Z}}tag`), 'top');
    assert.equal(textFound(listing.get('/dav/n0000.txt'), `{${Z}}tag`), 'first');
    assert.equal(textFound(listing.get('/dav/n0519.txt'), `{${Z}}tag`), 'last');
    assert.equal(listing.get('/dav/n0300.txt')!.get(`{${Z}}tag`)?.status, 404);
    assert.equal(textFound(listing.get('/dav/n0519.txt'), '{DAV:}getcontentlength'), '10');
  });

  test('another account sees its own tree only', async () => {
    const other = await t.account();
    const mine = await upload(owner, 'private.txt', 'mine');
    const auth = basic(other.login, other.key);
    assert.equal((await dav('PROPFIND', '/dav/private.txt', { headers: { Depth: '0' }, auth })).status, 404);
    assert.equal(
      (
        await dav('PROPPATCH', '/dav/private.txt', {
          auth,
          body: `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><Z:x xmlns:Z="${Z}">1</Z:x></D:prop></D:set></D:propertyupdate>`,
        })
      ).status,
      404,
    );
    const listing = multistatus(await dav('PROPFIND', '/dav/', { headers: { Depth: '1' }, auth }));
    assert.deepEqual([...listing.keys()], ['/dav/']);
    assert.ok(mine);
  });
});

describe('WebDAV sign-in (HTTP Basic)', () => {
  const LIMIT = 3;
  let t: TestServer;
  let address = 0;

  before(async () => {
    // Each test its own client address (X-Forwarded-For behind a trusted proxy), so the throttle of one cannot reach another.
    t = await startTestServer({ loginAttemptsPerMinute: LIMIT, trustProxy: true, webdavAllowHttp: true });
  });
  after(() => t.close());

  function propfind(auth: string | null, ip: string): Promise<ReadResponse> {
    const headers: Record<string, string> = { Depth: '0', 'X-Forwarded-For': ip };
    if (auth !== null) headers.Authorization = auth;
    return t.fetch('/dav/', { method: 'PROPFIND', headers }).then(read);
  }

  const newAddress = () => `198.51.100.${++address}`;

  function assertChallenge(response: ReadResponse): void {
    assert.equal(response.status, 401, response.body);
    assert.match(response.headers.get('www-authenticate') ?? '', /^Basic realm="filehaven"/);
  }

  test("no credentials, a malformed header, a wrong key or another account's key: 401 with a Basic challenge", async () => {
    const account = await t.account();
    const other = await t.account();
    const ip = newAddress();
    assertChallenge(await propfind(null, ip));
    assertChallenge(await propfind('Bearer abc', ip));
    assertChallenge(await propfind(`Basic ${Buffer.from('no colon').toString('base64')}`, newAddress()));
    assertChallenge(await propfind(basic(account.login, `${account.key.slice(0, -1)}${account.key.endsWith('x') ? 'y' : 'x'}`), newAddress()));
    assertChallenge(await propfind(basic(account.login, other.key), newAddress()));
    assert.equal((await propfind(basic(account.login, account.key), newAddress())).status, 207);
  });

  test('the password works for a plain account; with TOTP on, only the API key does', async () => {
    const plain = await t.account();
    assert.equal((await propfind(basic(plain.login, plain.password), newAddress())).status, 207);

    const guarded = await t.account();
    const { secondFactors } = t.server.services;
    const setup = (await secondFactors.begin(guarded.account, 'filehaven'))!;
    const code = TOTP.generate({ secret: Secret.fromBase32(setup.secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: t.server.services.clock() });
    assert.ok(await secondFactors.confirm(guarded.account, code, setup.sealed, 'test'));
    const refused = await propfind(basic(guarded.login, guarded.password), newAddress());
    assertChallenge(refused);
    assert.match(refused.body, /API key/);
    assert.equal((await propfind(basic(guarded.login, guarded.key), newAddress())).status, 207);
  });

  test(`after ${LIMIT} wrong passwords from one address, 429 (the right password too); a key still works`, async () => {
    const account = await t.account();
    const ip = newAddress();
    for (let attempt = 0; attempt < LIMIT; attempt++) assertChallenge(await propfind(basic(account.login, `wrong ${attempt}`), ip));
    const locked = await propfind(basic(account.login, 'wrong again'), ip);
    assert.equal(locked.status, 429, locked.body);
    assert.equal((await propfind(basic(account.login, account.password), ip)).status, 429);
    assert.equal((await propfind(basic(account.login, account.key), ip)).status, 207);
  });
});
