// Rewrites the endpoint table of docs/api.md from the catalogue the server and the developers
// page use (src/http/api/api-catalogue.ts). Run by hand after changing the catalogue:
//   node --import tsx scripts/readme-endpoints.ts
// test/http/web-pages.test.ts fails while the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { endpointsMarkdown } from '../src/http/api/api-catalogue.js';

const file = new URL('../docs/api.md', import.meta.url);
const doc = readFileSync(file, 'utf8');
const block = /(<!-- endpoints:start[^>]*-->)\n(?:[\s\S]*?\n)?(<!-- endpoints:end -->)/;
if (!block.test(doc)) {
  console.error('docs/api.md has no <!-- endpoints:start --> ... <!-- endpoints:end --> block');
  process.exit(1);
}
writeFileSync(
  file,
  doc.replace(block, (_all, start: string, end: string) => `${start}\n${endpointsMarkdown()}\n${end}`),
);
console.log('docs/api.md endpoint table updated');
