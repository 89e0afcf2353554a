// A node:test reporter that prints, when a run ends, each test file's time (the sum of its
// top-level tests' durations: a file's tests run one after another) and test count, slowest
// first. scripts/run-tests.js writes it to test-output/timings-<pass>.txt beside the spec
// reporter's output, so a slow file is named, not guessed.
import path from 'node:path';

export default async function* timings(source) {
  const files = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (!file || nesting !== 0) continue;
    const entry = files.get(file) ?? { ms: 0, tests: 0, failed: 0 };
    entry.ms += details.duration_ms ?? 0;
    entry.tests += 1;
    if (event.type === 'test:fail') entry.failed += 1;
    files.set(file, entry);
  }
  const rows = [...files].sort((a, b) => b[1].ms - a[1].ms);
  const total = rows.reduce((sum, [, entry]) => sum + entry.ms, 0);
  yield `${(total / 1000).toFixed(1).padStart(8)} s  all ${rows.length} files (summed; files run side by side)\n`;
  for (const [file, entry] of rows) {
    const failed = entry.failed > 0 ? `  (${entry.failed} failed)` : '';
    yield `${(entry.ms / 1000).toFixed(1).padStart(8)} s  ${String(entry.tests).padStart(4)}  ${path.relative(process.cwd(), file)}${failed}\n`;
  }
}
