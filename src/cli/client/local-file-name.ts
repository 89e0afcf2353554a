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
  return cleaned === '' ? fallback : fitBytes(cleaned, MAX_NAME_BYTES);
}

/**
 * Longest name kept, in UTF-8 bytes: file systems allow 255, and `download` adds
 * `.part.json` (10 bytes) beside the file while it runs.
 */
const MAX_NAME_BYTES = 245;

/** The longest start of `text` that fits in `max` UTF-8 bytes, never cutting a character in two. */
function fitBytes(text: string, max: number): string {
  let bytes = 0;
  let end = 0;
  for (const character of text) {
    bytes += Buffer.byteLength(character);
    if (bytes > max) break;
    end += character.length;
  }
  return text.slice(0, end);
}
