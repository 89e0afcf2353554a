import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Figure, SectionResult } from './figures.js';

export type BackendReport = { backend: string; skipped: string } | { backend: string; setup: string; seconds: number; sections: SectionResult[] };

const verdict = (met: boolean | null): string => (met === null ? '' : met ? 'meets' : 'MISSES');

const columns = (f: Figure): string[] => [f.what, f.value, f.reference, f.ratio, f.target, verdict(f.met)];
const HEADINGS = ['figure', 'filehaven', 'reference (same run)', 'ratio', 'target', ''];

export function printBackend(report: BackendReport): void {
  if ('skipped' in report) {
    console.log(`\n== ${report.backend}: SKIPPED: ${report.skipped}`);
    return;
  }
  console.log(`\n== ${report.backend}: ${report.setup} (${report.seconds.toFixed(0)} s)`);
  const rows = report.sections.flatMap((result) => result.figures.map(columns));
  const widths = HEADINGS.map((heading, i) => Math.max(heading.length, ...rows.map((row) => row[i]!.length)));
  const print = (cells: string[]) =>
    console.log(
      cells
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  print(HEADINGS);
  for (const row of rows) print(row);
  for (const result of report.sections) for (const note of result.notes) console.log(`  ${result.title}: ${note}`);
}

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** BENCHMARKS.md: the machine, the date, the settings and every figure of the run. */
export function writeReport(file: string, run: { started: Date; seconds: number; machine: string[]; settings: string; reports: BackendReport[] }): void {
  const lines = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (bench/run.ts); run it again to see where filehaven stands on',
    'your machine. Every figure is measured beside its reference in the same run (nginx for',
    'bytes, a bare `node:http` server for requests, the raw S3 client for the object store),',
    'A/B alternating, medians: on a shared machine only the ratios mean much.',
    '',
    `Run of ${run.started.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${run.seconds.toFixed(0)} s; ${run.settings}.`,
    '',
    ...run.machine.map((line) => `- ${line}`),
  ];
  for (const report of run.reports) {
    lines.push('', `## ${report.backend}`, '');
    if ('skipped' in report) {
      lines.push(`Skipped: ${report.skipped}`);
      continue;
    }
    lines.push(`${report.setup}.`, '', `| ${HEADINGS.join(' | ')} |`, `|${HEADINGS.map(() => '---').join('|')}|`);
    for (const result of report.sections) for (const f of result.figures) lines.push(`| ${columns(f).map(cell).join(' | ')} |`);
    lines.push('');
    for (const result of report.sections) for (const note of result.notes) lines.push(`- ${result.title}: ${cell(note)}`);
  }
  // The variants measured by hand while tuning, kept beside the figures they explain.
  const variants = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'variants.md');
  if (existsSync(variants)) lines.push('', readFileSync(variants, 'utf8').trimEnd());
  writeFileSync(file, `${lines.join('\n')}\n`);
}
