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
/** Where a file's rename form posts. */
export const MY_RENAME_PATH = `${MY_FILES_PATH}/rename`;
/** Where a folder's rename, leave and delete forms post. */
export const MY_FOLDER_RENAME_PATH = `${MY_FILES_PATH}/folders/rename`;
export const MY_FOLDER_LEAVE_PATH = `${MY_FILES_PATH}/folders/leave`;
export const MY_FOLDER_DELETE_PATH = `${MY_FILES_PATH}/folders/delete`;

/** The notes a form's redirect may ask the page to show; fixed texts, never user input. */
export const NOTES = {
  moved: 'The file was moved.',
  deleted: 'The file was deleted.',
  folder: 'The folder was created.',
  renamed: 'The file was renamed.',
  'folder-renamed': 'The folder was renamed.',
  'folder-deleted': 'The folder was deleted.',
  left: 'The folder’s files and folders moved up one level; the folder is empty now.',
  'to-top': 'The file was moved to the top of My files.',
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
