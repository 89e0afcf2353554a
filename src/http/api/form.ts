import type { FastifyRequest } from 'fastify';

/** A text parameter of a parsed body or query object (the first, if repeated). */
function textParam(source: unknown, name: string): string | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  const value = (source as Record<string, unknown>)[name];
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/** A text parameter from the form body only: for secrets, which must not sit in URLs and logs. */
export function bodyField(request: FastifyRequest, name: string): string | undefined {
  return textParam(request.body, name);
}

/** A text parameter from the form body, else the query string. */
export function formField(request: FastifyRequest, name: string): string | undefined {
  return textParam(request.body, name) ?? textParam(request.query, name);
}

/**
 * The ids of `files[0]`, `files[1]`, ... (SPEC.md), in index order; `files[]` and
 * `files` (repeated) are accepted too. Non-string values are kept as "" so they fail
 * validation instead of vanishing.
 */
export function indexedFiles(request: FastifyRequest): string[] {
  const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
  const indexed: Array<[number, unknown]> = [];
  const plain: unknown[] = [];
  for (const [key, value] of Object.entries(body)) {
    const match = /^files\[(\d*)\]$/.exec(key);
    if (match && match[1] !== '') indexed.push([Number(match[1]), value]);
    else if (match || key === 'files') plain.push(...(Array.isArray(value) ? value : [value]));
  }
  indexed.sort((a, b) => a[0] - b[0]);
  const values = [...indexed.map(([, value]) => value), ...plain].flatMap((value) => (Array.isArray(value) ? value : [value]));
  return values.map((value) => (typeof value === 'string' ? value.trim() : ''));
}
