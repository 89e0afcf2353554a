/**
 * A file name from the server as a name in the current folder: never a path (no `/` or
 * `\`, not `.` or `..`), no control characters, not hidden by a leading dot; the id when
 * nothing is left. A hostile server cannot make `download` write outside the folder.
 */
export function localFileName(name: string, fallback: string): string {
  const cleaned = name
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
    .replace(/[/\\]/g, '_')
    .replace(/^\.+/, '')
    .trim();
  return cleaned === '' ? fallback : cleaned.slice(0, 255);
}
