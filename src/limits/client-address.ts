import { isIPv6 } from 'node:net';

/**
 * The key a per-address limit counts a client under. IPv4 addresses (also IPv4-mapped
 * IPv6) count one by one; an IPv6 address counts as its /64, the block one subscriber
 * usually gets, so a client cannot escape a limit by rotating through its own addresses.
 */
export function addressKey(ip: string | undefined): string {
  // A socket already gone has no address; such requests share one key.
  if (!ip) return 'unknown';
  // IPv4, the common case, counts as it is (and skips the IPv6 parsing below).
  if (!ip.includes(':')) return ip;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  const bare = ip.replace(/%.*$/, '');
  if (!isIPv6(bare)) return ip;
  const [head = '', tail] = bare.split('::', 2);
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  // An embedded IPv4 suffix is two groups.
  if (right.length > 0 && right[right.length - 1]!.includes('.')) right.splice(-1, 1, '0', '0');
  else if (left.length > 0 && left[left.length - 1]!.includes('.')) left.splice(-1, 1, '0', '0');
  const zeros = Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  const prefix = [...left, ...zeros, ...right].slice(0, 4).map((group) => parseInt(group, 16).toString(16));
  return `${prefix.join(':')}::/64`;
}
