/** The signed-in file manager (not under /files/: the API owns that path, API.md 1). */
export const MY_FILES_PATH = '/my/files';
/** Where the upload form posts (multipart, streamed). */
export const MY_UPLOAD_PATH = `${MY_FILES_PATH}/upload`;
/** Where a file's move form posts. */
export const MY_MOVE_PATH = `${MY_FILES_PATH}/move`;
/** Where a file's delete form posts (a confirm page first). */
export const MY_DELETE_PATH = `${MY_FILES_PATH}/delete`;
/** Where the create-folder form posts. */
export const MY_FOLDERS_PATH = `${MY_FILES_PATH}/folders`;

/** The notes a form's redirect may ask the page to show; fixed texts, never user input. */
export const NOTES = {
  moved: 'The file was moved.',
  deleted: 'The file was deleted.',
  folder: 'The folder was created.',
} as const;
export type NoteKey = keyof typeof NOTES;

/** The My files page of a folder (or of every file when null), with an optional note. */
export function myFilesUrl(folderId: string | null | undefined, note?: NoteKey): string {
  const params = new URLSearchParams();
  if (folderId) params.set('folder', folderId);
  if (note) params.set('note', note);
  const query = params.toString();
  return query === '' ? MY_FILES_PATH : `${MY_FILES_PATH}?${query}`;
}
