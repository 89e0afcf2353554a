/**
 * The last few hundred results of a digest function, by input. The API key of every
 * request is hashed twice (the keyed lookup hash, the rate limiter's counter key); a
 * client sends the same key again and again, and an HMAC costs several microseconds,
 * a Map lookup a fraction of one (issue 9: GET /account). Bounded, oldest out first, so
 * a flood of made-up keys costs memory only up to `capacity` entries.
 */
export function rememberRecent(digest: (input: string) => string, capacity = 1024): (input: string) => string {
  const recent = new Map<string, string>();
  return (input) => {
    let value = recent.get(input);
    if (value === undefined) {
      value = digest(input);
      if (recent.size >= capacity) recent.delete(recent.keys().next().value!);
      recent.set(input, value);
    }
    return value;
  };
}
