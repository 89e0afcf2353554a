import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

// Every relative link in README.md and docs/*.md points to a file that exists and, with a
// `#anchor` into a markdown file, to one of its headings (GitHub's slugs), so moving a
// section cannot break a link silently. Links to other sites are not fetched.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const docsDir = path.join(root, 'docs');
const pages = [
  'README.md',
  ...readdirSync(docsDir)
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks, code spans kept as their words without backticks. */
function prose(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    if (fence === undefined) lines.push(line);
  }
  return lines;
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a markdown file's headings, repeated ones numbered as GitHub does. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every link target of a page: markdown links and images, and HTML src/href attributes. */
function links(markdown: string): string[] {
  const text = prose(markdown)
    .join('\n')
    .replace(/`+[^`\n]*`+/g, 'code');
  const targets: string[] = [];
  for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]!);
  for (const match of text.matchAll(/\b(?:src|href)="([^"]+)"/g)) targets.push(match[1]!);
  return targets;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let found = anchorCache.get(file);
  if (!found) {
    found = anchors(readFileSync(file, 'utf8'));
    anchorCache.set(file, found);
  }
  return found;
}

describe('links in README.md and docs/', () => {
  test('GitHub slugs', () => {
    assert.equal(slug('Moving to PostgreSQL and S3 (`filehaven migrate`)'), 'moving-to-postgresql-and-s3-filehaven-migrate');
    assert.equal(slug('Starting, stopping, probes'), 'starting-stopping-probes');
    assert.equal(slug('Client: the `filehaven` command for users, and the SDK'), 'client-the-filehaven-command-for-users-and-the-sdk');
    assert.deepEqual([...anchors('# A\n## A\n```\n# not a heading\n```\n## A')], ['a', 'a-1', 'a-2']);
  });

  for (const page of pages) {
    test(`${page}: every relative link and anchor resolves`, () => {
      const file = path.join(root, page);
      const broken: string[] = [];
      for (const target of links(readFileSync(file, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const hash = target.indexOf('#');
        const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
        const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
        const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), pathPart);
        if (!existsSync(resolved)) {
          broken.push(`${target}: no such file`);
          continue;
        }
        if (anchor === undefined || anchor === '') continue;
        if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
          broken.push(`${target}: an anchor into a file that is not markdown`);
          continue;
        }
        if (!anchorsOf(resolved).has(anchor)) broken.push(`${target}: no heading with that anchor`);
      }
      assert.deepEqual(broken, [], `${page} has broken links`);
    });
  }

  test('README.md links every file in docs/', () => {
    const targets = new Set(links(readFileSync(path.join(root, 'README.md'), 'utf8')).map((target) => target.split('#')[0]));
    const unlinked = pages.filter((page) => page.startsWith('docs/') && !targets.has(page));
    assert.deepEqual(unlinked, [], 'README.md should list every docs file under "Documentation"');
  });
});
