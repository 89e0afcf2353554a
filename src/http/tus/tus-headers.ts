/** Where resumable uploads live, under {base_url}. */
export const UPLOADS_PATH = '/uploads';

/** The header a page of the site sends its session's CSRF token in (the site has no API key). */
export const CSRF_HEADER = 'Filehaven-Csrf';

/** Headers that tell a client which file its finished upload became. */
export const FILE_HEADERS = { id: 'Filehaven-File-Id', download: 'Filehaven-Download-Link', delete: 'Filehaven-Delete-Link' } as const;

/**
 * The largest PATCH body a client should send (--upload-chunk-size), on every answer of
 * the endpoint (OPTIONS, creation, HEAD...): a proxy's body limit below the largest file
 * would refuse a file sent in one PATCH. The name is agreed with the site's uploader.
 */
export const MAX_CHUNK_SIZE_HEADER = 'Filehaven-Max-Chunk-Size';
