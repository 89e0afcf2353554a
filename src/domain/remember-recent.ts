/**
 * `compute`, remembering its last few hundred results by input. For work that runs on
 * every request with the same few inputs again and again: the API key's hashes (an HMAC
 * costs several microseconds, a Map lookup a fraction of one), an account's premium dates
 * (V8's date formatting) (issue 9: GET /account). Bounded, oldest out first, so a flood of
 * made-up inputs costs memory only up to `capacity` entries.
 */
export function rememberRecent<K, V>(compute: (input: K) => V, capacity = 1024): (input: K) => V {
  const recent = new Map<K, V>();
  return (input) => {
    if (recent.has(input)) return recent.get(input)!;
    const value = compute(input);
    if (recent.size >= capacity) recent.delete(recent.keys().next().value!);
    recent.set(input, value);
    return value;
  };
}
