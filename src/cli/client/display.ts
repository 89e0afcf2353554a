/** Formatting for the user commands' human output. */
import { humanBytes as formatBytes } from '../../config/units.js';

/**
 * A name from the server as safe terminal text: control characters (an escape sequence
 * could rewrite the screen or the title bar) become `?`.
 */
export function shown(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

/**
 * Lines of text for the terminal: every control character but the line breaks and tabs
 * the commands write themselves becomes `?`, so nothing a server sends (an id, a link, an
 * error message) can carry an escape sequence to the screen.
 */
export function terminalText(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '?');
}

/** Bytes in binary units, `1.5 MiB`. */
export function humanBytes(bytes: number): string {
  return formatBytes(bytes, true);
}

/** Rows of cells as aligned columns (the last column is never padded). */
export function columns(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [index, cell] of row.entries()) widths[index] = Math.max(widths[index] ?? 0, cell.length);
  }
  return rows.map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  ')).join('\n');
}

/** `label: value` lines, the values aligned. */
export function fields(rows: Array<[string, string | number]>): string {
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  return rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`).join('\n');
}
