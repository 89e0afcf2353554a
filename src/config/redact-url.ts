/**
 * A database or Redis URL fit for a message: the password, if any, replaced, and the
 * query's values too (drivers read `?password=` there as well).
 */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    for (const name of [...url.searchParams.keys()]) url.searchParams.set(name, '***');
    return url.toString().replace(/%2A%2A%2A/g, '***');
  } catch {
    return '(unparsable URL)';
  }
}
