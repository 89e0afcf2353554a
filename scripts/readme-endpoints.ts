// Rewrites the README's endpoint table from the catalogue the server and the developers
// page use (src/http/api/api-catalogue.ts). Run by hand after changing the catalogue:
//   node --import tsx scripts/readme-endpoints.ts
// test/http/web-pages.test.ts fails while the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { endpointsMarkdown } from '../src/http/api/api-catalogue.js';

const file = new URL('../README.md', import.meta.url);
const readme = readFileSync(file, 'utf8');
const block = /(<!-- endpoints:start[^>]*-->)\n(?:[\s\S]*?\n)?(<!-- endpoints:end -->)/;
if (!block.test(readme)) {
  console.error('README.md has no <!-- endpoints:start --> ... <!-- endpoints:end --> block');
  process.exit(1);
}
writeFileSync(
  file,
  readme.replace(block, (_all, start: string, end: string) => `${start}\n${endpointsMarkdown()}\n${end}`),
);
console.log('README.md endpoint table updated');
